"""Scorer room: the Scorer protocol, the registry and the built-in scorer families.

Registration is declarative: each family module registers entries that say how to build the scorer, how to
tell whether its weights resolve on this machine, and the command that installs them; `catalog` lists the
families explicitly and discovers plugins.
"""
from attrib_audit.scorers.base import ScoreBatch, Scorer, ScorerOptionError, ScorerSpec, ScorerUnavailable, register
from attrib_audit.scorers.catalog import get_scorer, registry
from attrib_audit.scorers.embedding import resolve_minilm, resolve_mpnet
from attrib_audit.scorers.models import MINILM_HUB, MPNET_HUB, MPNET_PARTS
from attrib_audit.scorers.resolve import Resolved

__all__ = ["MINILM_HUB", "MPNET_HUB", "MPNET_PARTS", "Resolved", "ScoreBatch", "Scorer", "ScorerOptionError",
           "ScorerSpec",
           "ScorerUnavailable", "get_scorer", "register", "registry", "resolve_minilm", "resolve_mpnet"]
