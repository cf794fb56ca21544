"""What `models list` shows per registered scorer, as a record: nothing is loaded (no torch at listing time)."""
from __future__ import annotations

from dataclasses import dataclass

from attrib_audit.scorers import knownanswers
from attrib_audit.scorers.catalog import registry


@dataclass(frozen=True, kw_only=True)
class ModelEntry:
    """One registered scorer: whether it can run here, where its weights resolve, what else it needs, how to
    install it, and its last known-answer check (None if never checked)."""

    name: str
    ready: bool
    description: str
    where: str
    needs: tuple[str, ...]
    install: str
    check: str | None


def model_entries() -> list[ModelEntry]:
    """One entry per registered scorer, sorted by name.

    Returns:
        The entries `models list` prints, each checked for availability without loading the scorer.
    """
    entries = []
    for name, spec in sorted(registry().items()):
        ok, where = spec.check()
        needs = (*spec.needs, f"sentences: {spec.sentences}") if spec.sentences else tuple(spec.needs)
        entries.append(ModelEntry(name=name, ready=ok, description=spec.description, where=where, needs=needs,
                                  install=spec.install, check=knownanswers.summary(name)))
    return entries
