"""Flatten provenance examples into arrays: units, unique passage texts, token matrices and ranking pools.

A pool is a flat list of (unit, passage text) entries sorted by unit, with per-entry
flags (gold, distractor, cited); every ranker and metric works on these arrays.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy import sparse

from attrib_audit.provenance.records import ProvenanceExample
from attrib_audit.text.answers import normalize_answer
from attrib_audit.text.tokenize import token_set


def answer_hint(unit: str, answers: Sequence[str]) -> float:
    """h(u): fraction of gold short answers found in the unit, matched on normalised word boundaries; 0 without
    answers."""
    norm = [a for a in (normalize_answer(x) for x in answers) if a]
    if not norm:
        return 0.0
    padded = f" {normalize_answer(unit)} "
    return sum(f" {a} " in padded for a in norm) / len(norm)


@dataclass(frozen=True, kw_only=True)
class Pool:
    """Candidate entries of every unit, contiguous per unit (`unit` is non-decreasing)."""

    unit: np.ndarray  # (P,) unit index
    text: np.ndarray  # (P,) index into Corpus.texts
    gold: np.ndarray  # (P,) bool: a gold passage of the unit's example
    distractor: np.ndarray  # (P,) bool: taken from another example
    cited: np.ndarray  # (P,) bool: the unit cites this passage

    def __len__(self) -> int:
        return int(self.unit.size)

    def random_baseline(self, n_units: int) -> np.ndarray:
        """|gold| / |pool| per unit: the top-1 accuracy of a uniformly random pick."""
        size = np.bincount(self.unit, minlength=n_units)
        gold = np.bincount(self.unit, weights=self.gold, minlength=n_units)
        return gold / np.maximum(size, 1)


def binary_token_matrix(token_sets: list[frozenset[str]], vocab: dict[str, int]) -> sparse.csr_matrix:
    """Rows of 0/1 token indicators (vocabulary grows as new tokens appear)."""
    indptr: list[int] = [0]
    indices: list[int] = []
    for ts in token_sets:
        indices.extend(vocab.setdefault(t, len(vocab)) for t in ts)
        indptr.append(len(indices))
    data = np.ones(len(indices), dtype=np.float32)
    return sparse.csr_matrix((data, np.asarray(indices, dtype=np.int64), np.asarray(indptr, dtype=np.int64)),
                             shape=(len(token_sets), max(len(vocab), 1)))


@dataclass(kw_only=True)
class Corpus:
    examples: list[ProvenanceExample]
    texts: list[str]  # unique passage texts
    unit_texts: list[str]
    unit_example: np.ndarray  # (U,) example index of each unit
    unit_group: list[str]  # bootstrap cluster of each unit
    unit_hint: np.ndarray  # (U,) h(u)
    text_owner: sparse.csr_matrix  # (T, E) 1 where the text is a passage of the example
    text_tokens: sparse.csr_matrix  # (T, V)
    unit_tokens: sparse.csr_matrix  # (U, V)
    tiebreak: np.ndarray  # (T,) CRC-32 of each text: ties go to the smaller, blind to gold and pool order
    clean: Pool

    @property
    def n_units(self) -> int:
        return len(self.unit_texts)

    @classmethod
    def build(cls, examples: list[ProvenanceExample]) -> "Corpus":
        text_index: dict[str, int] = {}
        owner_rows, owner_cols = [], []
        unit_texts: list[str] = []
        unit_example: list[int] = []
        unit_group: list[str] = []
        unit_hint: list[float] = []
        e_unit, e_text, e_gold, e_cited = [], [], [], []
        for ei, ex in enumerate(examples):
            pidx = []
            for p in ex.passages:
                t = text_index.setdefault(p.text, len(text_index))
                pidx.append(t)
                owner_rows.append(t)
                owner_cols.append(ei)
            gold = np.array([p.id in ex.gold for p in ex.passages])
            for unit, cites in zip(ex.units, ex.citations):
                u = len(unit_texts)
                unit_texts.append(unit)
                unit_example.append(ei)
                unit_group.append(ex.group)
                unit_hint.append(answer_hint(unit, ex.answers))
                e_unit.append(np.full(len(pidx), u))
                e_text.append(np.asarray(pidx))
                e_gold.append(gold)
                e_cited.append(np.array([p.id in cites for p in ex.passages]))
        texts = list(text_index)
        owner = sparse.csr_matrix((np.ones(len(owner_rows), dtype=np.int8), (owner_rows, owner_cols)),
                                  shape=(len(texts), len(examples)))
        owner.data[:] = 1  # a text repeated within one example is still one ownership
        vocab: dict[str, int] = {}
        text_tokens = binary_token_matrix([token_set(t) for t in texts], vocab)
        unit_tokens = binary_token_matrix([token_set(u) for u in unit_texts], vocab)
        # scipy-stubs 1.17 types csr_matrix.resize's shape as Never
        text_tokens.resize((text_tokens.shape[0], max(len(vocab), 1)))  # type: ignore[arg-type]
        clean = Pool(unit=np.concatenate(e_unit).astype(np.int64), text=np.concatenate(e_text).astype(np.int64),
                     gold=np.concatenate(e_gold).astype(bool), distractor=np.zeros(sum(map(len, e_unit)), dtype=bool),
                     cited=np.concatenate(e_cited).astype(bool))
        tiebreak = np.fromiter((zlib.crc32(t.encode("utf-8", "surrogatepass")) for t in texts), dtype=np.int64,
                               count=len(texts))
        return cls(examples=examples, texts=texts, unit_texts=unit_texts,
                   unit_example=np.asarray(unit_example, dtype=np.int64), unit_group=unit_group,
                   unit_hint=np.asarray(unit_hint, dtype=np.float64), text_owner=owner, text_tokens=text_tokens,
                   unit_tokens=unit_tokens, tiebreak=tiebreak, clean=clean)

    def with_distractors(self, distractors: np.ndarray) -> Pool:
        """The clean pool plus, per unit, the distractor texts in row u of `distractors` (-1 = none)."""
        u, j = np.nonzero(distractors >= 0)
        unit = np.concatenate([self.clean.unit, u])
        order = np.argsort(unit, kind="stable")
        n = u.size
        return Pool(unit=unit[order], text=np.concatenate([self.clean.text, distractors[u, j]])[order],
                    gold=np.concatenate([self.clean.gold, np.zeros(n, dtype=bool)])[order],
                    distractor=np.concatenate([self.clean.distractor, np.ones(n, dtype=bool)])[order],
                    cited=np.concatenate([self.clean.cited, np.zeros(n, dtype=bool)])[order])
