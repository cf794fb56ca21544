"""Metrics computed outside attrib-audit: score columns, score files and evaluator exports.

They enter the audit as precomputed scorers with the same statistics as the built-in ones.
"""
from attrib_audit.external.precomputed import Precomputed, from_values
from attrib_audit.external.sources import ScoreSource, precomputed_scores

__all__ = ["Precomputed", "ScoreSource", "from_values", "precomputed_scores"]
