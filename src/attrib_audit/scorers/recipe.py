"""A model scorer's recipe: everything between (claim, evidence) and a score, stated in one place.

Each model scorer builds one `Recipe` and its signature carries `Recipe.digest()`, so changing any part
of how a model is fed or read (template, window, sentence splitter, chunking, aggregation, precision, label
read) changes the cache key: a cached score is only replayed for the very same computation. `source` says
where the recipe comes from (the authors' inference code), so a reader can check it against the original.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass


@dataclass(frozen=True, kw_only=True)
class Recipe:
    input: str  # the text(s) the model sees, e.g. "pair(premise=evidence, hypothesis=claim)"
    window: int | None  # tokens per model input (None: the model's own, uncut)
    cut: str  # which side is cut when an input is over the window ("evidence": always, and counted)
    chunk_unit: str  # "none", "words", "tokens" (model tokens), "sentences"
    chunk_size: int  # words or tokens per chunk; 0 when unchunked
    chunk_rule: str  # how evidence becomes chunks
    claim_split: str  # "none" or "sentences" (each claim sentence scored on its own)
    sentences: str  # the sentence splitter chunks and claim sentences come from ("none" when nothing is split)
    aggregation: str  # how chunk (and claim-sentence) scores become one score
    precision: str  # the dtype the weights run in ("float32" unless the dtype option asks for half precision)
    label: str  # how P(supported) is read from the model's output
    source: str  # where the recipe comes from

    def digest(self) -> str:
        """sha256 (16 hex) of every field: what a signature carries."""
        return hashlib.sha256(json.dumps(asdict(self), sort_keys=True).encode()).hexdigest()[:16]

    def describe(self) -> str:
        """One line per field, for `models list` and the docs."""
        return "\n".join(f"{k}: {v}" for k, v in asdict(self).items())
