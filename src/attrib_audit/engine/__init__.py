"""Engine room: run scorers over tables with dedupe, length-sorted batches and a crash-safe cache.

`score_pairs` scores in memory; `stream.stream_score` streams files chunk by chunk;
`ray_engine.ray_score` runs the same scoring on Ray Data actors (optional extra `ray`).
"""
from attrib_audit.engine.cache import ScoreCache, default_cache_path, pair_key
from attrib_audit.engine.runner import RunStats, score_pairs
from attrib_audit.engine.stream import LoadOptions, iter_tables, stream_score

__all__ = ["LoadOptions", "RunStats", "ScoreCache", "default_cache_path", "iter_tables", "pair_key", "score_pairs",
           "stream_score"]
