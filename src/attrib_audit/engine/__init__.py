"""Engine room: run scorers over tables with dedupe, length-sorted batches and a crash-safe cache.

`score_pairs` scores in memory; `table.score_table` scores a PairTable with several scorers, locally or on Ray;
`stream.stream_score` streams files chunk by chunk; `ray_engine.ray_score` runs the same scoring on Ray Data
actors (optional extra `ray`).
"""
from attrib_audit.engine.cache import ScoreCache, pair_key
from attrib_audit.engine.runner import RunStats, score_pairs
from attrib_audit.engine.stream import iter_tables, stream_score
from attrib_audit.engine.table import build_scorers, score_table

__all__ = ["RunStats", "ScoreCache", "build_scorers", "iter_tables", "pair_key", "score_pairs", "score_table",
           "stream_score"]
