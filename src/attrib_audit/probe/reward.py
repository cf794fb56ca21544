"""A deterministic grounding reward: four terms from one support scorer, each returned separately.

For an answer with numbered passages ([1] is passages[0]):
1. claim_support: mean over factual sentences of the best support score against the passages the
   sentence cites (an uncited factual sentence scores 0); hedges/refusals/meta sentences are left out.
2. counterfactual_margin: mean over cited factual sentences of support(cited) − support(counterfactual),
   where the counterfactual is the example's other passages ("remove": the cited ones taken away,
   0 when none remain) or an unrelated passage ("swap"). Text that fits any passage earns nothing here.
3. evidence_coverage: share of the distinct cited passage numbers that support (score ≥ threshold)
   some sentence citing them; a number with no such passage counts as unsupported.
4. commitment: −1 when the evidence supports an answer (`answerable`) and the answer commits to no
   factual sentence (it hedges everything, refuses, or is empty); 0 otherwise.
total = Σ weight·term. Nothing here calls a model except `support`, so given the scorer it is pure.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Callable, Sequence

import numpy as np

from attrib_audit.engine.runner import score_pairs
from attrib_audit.probe.claims import FACTUAL, HEDGE, META, REFUSAL, AnswerSentence, parse_answer

SupportFn = Callable[[Sequence[str], Sequence[str]], np.ndarray]
TERMS = ("claim_support", "counterfactual_margin", "evidence_coverage", "commitment")
# Score at which a passage counts as supporting a sentence, per registry scorer (token Jaccard of a
# sentence against a whole passage is small even when the passage states it; cosine is not).
DEFAULT_THRESHOLDS = {"lexical": 0.15, "minilm": 0.5, "mpnet": 0.5, "blend": 0.35}


@dataclass(frozen=True)
class RewardWeights:
    claim_support: float = 1.0
    counterfactual_margin: float = 0.5
    evidence_coverage: float = 0.5
    commitment: float = 1.0

    @classmethod
    def parse(cls, text: str) -> "RewardWeights":
        """'claim_support=1,commitment=2' → weights (unnamed terms keep their default)."""
        known = {f.name for f in fields(cls)}
        values = {}
        for part in filter(None, (p.strip() for p in text.split(","))):
            key, sep, value = part.partition("=")
            if not sep or key.strip() not in known:
                raise ValueError(f"reward weight {part!r}: use TERM=VALUE with TERM in {', '.join(sorted(known))}")
            values[key.strip()] = float(value)
        return cls(**values)


@dataclass(frozen=True)
class RewardConfig:
    support_threshold: float
    weights: RewardWeights = field(default_factory=RewardWeights)
    counterfactual: str = "remove"  # or "swap"

    def __post_init__(self) -> None:
        if self.counterfactual not in ("remove", "swap"):
            raise ValueError(f"counterfactual must be 'remove' or 'swap', not {self.counterfactual!r}")

    @classmethod
    def for_scorer(cls, scorer: str, threshold: float | None = None, **kw) -> "RewardConfig":
        if threshold is None:
            if scorer not in DEFAULT_THRESHOLDS:
                raise ValueError(f"no default support threshold for scorer {scorer!r}: pass one "
                                 f"(defaults exist for {', '.join(sorted(DEFAULT_THRESHOLDS))})")
            threshold = DEFAULT_THRESHOLDS[scorer]
        return cls(support_threshold=float(threshold), **kw)


@dataclass(frozen=True, kw_only=True)
class RewardTerms:
    claim_support: float
    counterfactual_margin: float
    evidence_coverage: float
    commitment: float
    total: float
    n_sentences: int
    n_factual: int
    n_hedge: int
    n_refusal: int
    n_meta: int
    n_uncited_factual: int  # factual sentences citing no existing passage (their support is 0)
    n_invalid_citations: int  # distinct cited numbers with no such passage



class _Pairs:
    """Collects the (sentence, passage) pairs every answer needs, so the scorer runs once per batch."""

    def __init__(self) -> None:
        self.index: dict[tuple[str, str], int] = {}

    def add(self, claim: str, evidence: str) -> int:
        return self.index.setdefault((claim, evidence), len(self.index))

    def score(self, support: SupportFn) -> np.ndarray:
        if not self.index:
            return np.zeros(0)
        claims, evidences = zip(*self.index)
        s = np.asarray(support(list(claims), list(evidences)), dtype=np.float64)
        if s.shape != (len(self.index),):
            raise ValueError(f"support scorer returned shape {s.shape} for {len(self.index)} pairs")
        if np.isnan(s).any():
            raise ValueError("support scorer returned NaN: the grounding reward cannot be computed for those pairs")
        return np.clip(s, 0.0, 1.0)


@dataclass
class _Plan:
    sentences: list[AnswerSentence]
    cited: list[list[int]]  # per sentence: pair ids against its valid cited passages
    counter: list[list[int]]  # per sentence: pair ids against the counterfactual passages
    by_passage: dict[int, list[int]]  # cited number -> pair ids of the sentences citing it (empty if invalid)


def _plan(answer: str, passages: Sequence[str], unrelated: str | None, mode: str, pairs: _Pairs) -> _Plan:
    sents = parse_answer(answer)
    cited: list[list[int]] = []
    counter: list[list[int]] = []
    by_passage: dict[int, list[int]] = {}
    for s in sents:
        valid = [c for c in s.cites if 1 <= c <= len(passages)]
        ids = [pairs.add(s.text, passages[c - 1]) for c in valid]
        cited.append(ids)
        for c in s.cites:
            by_passage.setdefault(c, [])
        for c, pid in zip(valid, ids):
            by_passage[c].append(pid)
        if s.kind != FACTUAL or not valid:
            counter.append([])
        elif mode == "swap":
            if unrelated is None:
                raise ValueError("counterfactual='swap' needs an unrelated passage for every answer")
            counter.append([pairs.add(s.text, unrelated)])
        else:
            counter.append([pairs.add(s.text, p) for k, p in enumerate(passages, start=1) if k not in valid])
    return _Plan(sents, cited, counter, by_passage)


def _terms(plan: _Plan, s: np.ndarray, answerable: bool, config: RewardConfig) -> RewardTerms:
    kinds = [x.kind for x in plan.sentences]
    factual = [i for i, k in enumerate(kinds) if k == FACTUAL]
    best = lambda ids: float(s[ids].max()) if ids else 0.0  # noqa: E731
    claim = float(np.mean([best(plan.cited[i]) for i in factual])) if factual else 0.0
    margins = [best(plan.cited[i]) - best(plan.counter[i]) for i in factual if plan.cited[i]]
    margin = float(np.mean(margins)) if margins else 0.0
    cover = [bool(ids) and best(ids) >= config.support_threshold for ids in plan.by_passage.values()]
    coverage = float(np.mean(cover)) if cover else 0.0
    commitment = -1.0 if answerable and not factual else 0.0
    w = config.weights
    total = (w.claim_support * claim + w.counterfactual_margin * margin + w.evidence_coverage * coverage
             + w.commitment * commitment)
    return RewardTerms(claim_support=claim, counterfactual_margin=margin, evidence_coverage=coverage,
                       commitment=commitment, total=float(total), n_sentences=len(kinds), n_factual=len(factual),
                       n_hedge=kinds.count(HEDGE), n_refusal=kinds.count(REFUSAL), n_meta=kinds.count(META),
                       n_uncited_factual=sum(1 for i in factual if not plan.cited[i]),
                       n_invalid_citations=sum(1 for ids in plan.by_passage.values() if not ids))


def grounding_rewards(answers: Sequence[str], passages: Sequence[Sequence[str]], support: SupportFn,
                      config: RewardConfig, *, answerable: Sequence[bool] | None = None,
                      unrelated: Sequence[str] | None = None) -> list[RewardTerms]:
    """The reward terms of each answer against its own passages; `support` is called once for the batch.

    `answerable[i]` says the evidence supports an answer (default: True for all), which is when
    not committing is penalised; `unrelated[i]` is the swap passage for counterfactual='swap'.
    """
    n = len(answers)
    if (len(passages) != n or (answerable is not None and len(answerable) != n)
            or (unrelated is not None and len(unrelated) != n)):
        raise ValueError("answers, passages, answerable and unrelated must have one entry per answer")
    pairs = _Pairs()
    plans = [_plan(a, p, unrelated[i] if unrelated is not None else None, config.counterfactual, pairs)
             for i, (a, p) in enumerate(zip(answers, passages))]
    scores = pairs.score(support)
    return [_terms(plan, scores, True if answerable is None else bool(answerable[i]), config)
            for i, plan in enumerate(plans)]


def grounding_reward(answer: str, passages: Sequence[str], support: SupportFn, config: RewardConfig, *,
                     answerable: bool = True, unrelated: str | None = None) -> RewardTerms:
    """The reward terms of one answer (see `grounding_rewards`)."""
    return grounding_rewards([answer], [passages], support, config, answerable=[answerable],
                             unrelated=None if unrelated is None else [unrelated])[0]


def scorer_support(scorer, *, cache=None, batch_size: int | None = None) -> SupportFn:
    """A registry scorer as a support function, through the engine (dedupe, batches, optional cache)."""
    def support(claims: Sequence[str], evidences: Sequence[str]) -> np.ndarray:
        batch, _ = score_pairs(scorer, claims, evidences, cache=cache, batch_size=batch_size, quiet=True)
        bad = [f for f in batch.failures if f is not None]
        if bad:
            raise ValueError(f"support scorer {scorer.name} failed on {len(bad)} pairs (first: {bad[0]})")
        return batch.scores
    return support
