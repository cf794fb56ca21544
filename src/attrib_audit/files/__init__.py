"""Files attrib-audit writes and reads back, knowing nothing of what they hold: output folders staged and
published whole, SQLite cache files, default cache paths, hashing, and JSON (the one sanitiser, the sealed
writer, the one reader of a saved JSON object)."""
