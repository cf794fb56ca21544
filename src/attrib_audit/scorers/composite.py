"""Derived scorers as compositions the engine understands: a composite names its component scorers and how their
per-row scores combine, so the engine scores each component once (or reads it from the score cache) and composes,
instead of the composite running its components' models again.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, runtime_checkable

from attrib_audit.scorers.base import ScoreBatch, Scorer


@runtime_checkable
class Composite(Protocol):
    """A scorer whose score is a function of other scorers' scores on the same pairs.

    `components` maps a role to its scorer; `compose` receives one ScoreBatch per role, aligned with the pairs, and
    must return exactly what the composite's own `score` returns for them (the engine caches it under the
    composite's signature).
    """

    @property
    def components(self) -> Mapping[str, Scorer]: ...

    def compose(self, parts: Mapping[str, ScoreBatch]) -> ScoreBatch: ...
