"""Engine room: run scorers over tables with dedupe, length-sorted batches and a crash-safe cache."""
from attrib_audit.engine.cache import ScoreCache, default_cache_path, pair_key
from attrib_audit.engine.runner import RunStats, score_pairs

__all__ = ["RunStats", "ScoreCache", "default_cache_path", "pair_key", "score_pairs"]
