"""Confusable distractors: per unit, the k passages of *other* examples with the highest token Jaccard.

Intersections of all units with all candidates are one sparse product of 0/1 token
matrices (units × vocab)·(vocab × candidates), which is how the search stays fast at
thousands of units; `distractors_naive` is the obvious double loop it is checked and
benchmarked against.
"""
from __future__ import annotations

import numpy as np
from scipy import sparse

from attrib_audit.text.tokenize import jaccard

_BLOCK_CELLS = 1 << 22  # dense (units × candidates) cells per block (~32 MB of float64)


def sample_candidates(n_texts: int, cap: int | None, rng: np.random.Generator) -> np.ndarray:
    """All text indices, or a seeded sample of `cap` of them (sorted, so order never matters)."""
    if cap is None or cap >= n_texts:
        return np.arange(n_texts, dtype=np.int64)
    return np.sort(rng.choice(n_texts, size=cap, replace=False)).astype(np.int64)


def find_distractors(unit_tokens: sparse.csr_matrix, unit_example: np.ndarray, text_tokens: sparse.csr_matrix,
                     text_owner: sparse.csr_matrix, k: int, candidates: np.ndarray | None = None
                     ) -> tuple[np.ndarray, np.ndarray]:
    """(indices (U, k) into the texts, Jaccard (U, k)), best first; -1 / 0 where fewer than k overlap at all.

    A text owned by the unit's own example (including an identical sentence that also
    appears elsewhere) is never a distractor. Ties go to the lower text index.
    """
    cand = np.arange(text_tokens.shape[0], dtype=np.int64) if candidates is None else np.asarray(candidates, np.int64)
    n_units = unit_tokens.shape[0]
    out_idx = np.full((n_units, k), -1, dtype=np.int64)
    out_jac = np.zeros((n_units, k), dtype=np.float64)
    if k <= 0 or cand.size == 0 or n_units == 0:
        return out_idx, out_jac
    c_tok = text_tokens[cand]
    c_size = np.diff(c_tok.indptr).astype(np.float64)
    u_size = np.diff(unit_tokens.indptr).astype(np.float64)
    inter_all = (unit_tokens @ c_tok.T).tocsr()
    owner_t = text_owner[cand].T.tocsr()  # (E, C)
    kk = min(k, cand.size)
    step = max(1, _BLOCK_CELLS // cand.size)
    for start in range(0, n_units, step):
        rows = slice(start, min(start + step, n_units))
        inter = inter_all[rows].toarray().astype(np.float64)
        union = u_size[rows, None] + c_size[None, :] - inter
        jac = np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)
        jac[owner_t[unit_example[rows]].toarray() > 0] = -1.0
        # the k-th best per row bounds the winners; only entries at or above it (ties included) get sorted
        kth = np.partition(jac, jac.shape[1] - kk, axis=1)[:, jac.shape[1] - kk]
        r, c = np.nonzero((jac >= kth[:, None]) & (jac > 0))
        val = jac[r, c]
        order = np.lexsort((c, -val, r))  # best first, ties to the lower candidate index
        r, c, val = r[order], c[order], val[order]
        rank = np.arange(r.size) - np.searchsorted(r, r)  # position within its row
        keep = rank < kk
        out_idx[start + r[keep], rank[keep]] = cand[c[keep]]
        out_jac[start + r[keep], rank[keep]] = val[keep]
    return out_idx, out_jac


def distractors_naive(unit_sets: list[frozenset[str]], unit_example: np.ndarray, text_sets: list[frozenset[str]],
                      text_owners: list[set[int]], k: int, candidates: np.ndarray | None = None
                      ) -> tuple[np.ndarray, np.ndarray]:
    """The all-pairs Python loop over (unit, candidate): the reference for `find_distractors`."""
    cand = range(len(text_sets)) if candidates is None else [int(c) for c in candidates]
    out_idx = np.full((len(unit_sets), k), -1, dtype=np.int64)
    out_jac = np.zeros((len(unit_sets), k), dtype=np.float64)
    for u, us in enumerate(unit_sets):
        scored = [(jaccard(us, text_sets[c]), c) for c in cand if int(unit_example[u]) not in text_owners[c]]
        scored = sorted((s for s in scored if s[0] > 0), key=lambda s: (-s[0], s[1]))[:k]
        for j, (s, c) in enumerate(scored):
            out_idx[u, j], out_jac[u, j] = c, s
    return out_idx, out_jac
