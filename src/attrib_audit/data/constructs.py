"""The construct registry: what a labelled pair measures, so statistics never pool across constructs.

Every named adapter declares its construct; a user's own file states it in a `construct`
column or with `--construct`. Names outside the registry are allowed (a user's own
construct) but reported, so a typo does not silently become a construct of its own.
"""
from __future__ import annotations

CONSTRUCTS: dict[str, str] = {
    "attribution": "generated-answer attribution: is an answer sentence supported by its cited evidence",
    "fact-check": "fact-check entailment: is a (short) claim supported by its evidence",
    "provenance": "provenance/topicality: which evidence unit a claim came from (ranking, not pairs)",
    "boundary-dialogue": "boundary set: is a dialogue response attributable to its knowledge snippet",
    "boundary-grounding": "boundary set: is a generated claim grounded in its document (mixed tasks)",
    "boundary-summarisation": "boundary set: is a summary consistent with its source document",
    "boundary-paraphrase": "boundary set: is the second sentence a paraphrase of the first",
}


def register_construct(name: str, description: str) -> None:
    """Add a construct for Python users who bring a new kind of label."""
    if name in CONSTRUCTS and CONSTRUCTS[name] != description:
        raise ValueError(f"construct {name!r} is already registered: {CONSTRUCTS[name]}")
    CONSTRUCTS[name] = description


def unknown_construct_note(name: str) -> str | None:
    """A one-line note when `name` is not a registered construct (None when it is)."""
    if name in CONSTRUCTS:
        return None
    return (f"construct {name!r} is not registered (known: {', '.join(sorted(CONSTRUCTS))}); "
            "it is kept as a construct of its own and never pooled with the others")
