"""The provenance diagnostic: top-1 accuracy per ranker on the clean pools, the confusable-evidence
stress test over seeds, and the α sweep — one dataset at a time, never pooled with support audits.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

import numpy as np

from attrib_audit.audit.results import tool_info
from attrib_audit.engine.cache import ScoreCache
from attrib_audit.files.jsonfile import sealed_json
from attrib_audit.files.outdir import check_out_dir, new_run_id, write_text_atomic
from attrib_audit.files.records import to_record
from attrib_audit.provenance.corpus import Corpus, Pool
from attrib_audit.provenance.distractors import find_distractors, sample_candidates
from attrib_audit.provenance.rankers import (
    EmbeddingStore,
    Eq1Ranker,
    Eq1Weights,
    LexicalRanker,
    LinearRanker,
    PoolTerms,
    Ranker,
    ScorerRanker,
    Top1,
    top1,
)
from attrib_audit.provenance.records import ProvenanceSet
from attrib_audit.provenance.result import (
    AlphaSweep,
    Confusable,
    DatasetProvenance,
    PoolSummary,
    ProvenanceRun,
    ProvenanceSettings,
    RankerSpread,
    RankerTop1,
    ScorerFailures,
    SeedDraw,
    Spread,
    SweepSeries,
    Truncation,
    Unavailable,
)
from attrib_audit.scorers.base import ScorerUnavailable
from attrib_audit.scorers.blend import BlendScorer
from attrib_audit.scorers.catalog import get_scorer
from attrib_audit.scorers.embedding import EmbeddingScorer
from attrib_audit.stats.bootstrap import DEFAULT_B, slice_rng
from attrib_audit.stats.proportion import clustered_means

ALPHAS = tuple(round(0.1 * i, 1) for i in range(11))
DEFAULT_RANKERS = ("lexical", "minilm", "blend", "eq1")


@dataclass(kw_only=True)
class ProvenanceConfig:
    rankers: tuple[str, ...] = DEFAULT_RANKERS
    semantic: str = "minilm"  # the encoder of Eq. 1's sem term and of the α sweep
    eq1_weights: Eq1Weights = Eq1Weights()
    confusable_k: int = 5  # 0 skips the stress test
    seeds: int = 4
    candidate_cap: int | None = 5000  # distractor candidates sampled per seed; None = every passage
    # None: the default sweep (ALPHAS) only when a requested ranker embeds with `semantic` anyway, so a lexical-only
    # run never loads an encoder nor embeds every passage for a sweep nobody asked for; () never sweeps
    alphas: tuple[float, ...] | None = None
    n_boot: int = DEFAULT_B
    seed: int = 0
    device: str = "cpu"
    batch_size: int | None = None
    cache_path: str | None = None  # for registry scorers (e.g. NLI); ":memory:" keeps nothing
    scorer_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    quiet: bool = False


class _Rankers:
    """Builds the requested rankers; encoders are shared (one EmbeddingStore per encoder signature)."""

    def __init__(self, config: ProvenanceConfig, cache: ScoreCache, log: Callable[[str], None]) -> None:
        self.config, self.cache, self.log = config, cache, log
        self.stores: dict[str, EmbeddingStore] = {}
        self.unavailable: list[Unavailable] = []

    def _scorer(self, name: str):
        return get_scorer(name, device=self.config.device, **self.config.scorer_options.get(name, {}))

    def store(self, scorer: EmbeddingScorer) -> EmbeddingStore:
        """One store per encoder; its texts are read from and kept in the embedding cache beside the score cache."""
        if scorer.signature not in self.stores:
            scorer.use_vectors(self.cache.vectors)  # closes with the score cache when the run ends
            self.stores[scorer.signature] = EmbeddingStore(scorer)
        return self.stores[scorer.signature]

    def semantic_store(self) -> EmbeddingStore:
        scorer = self._scorer(self.config.semantic)
        if not isinstance(scorer, EmbeddingScorer):
            raise ValueError(f"--semantic {self.config.semantic!r} is not an embedding scorer (use minilm or mpnet)")
        return self.store(scorer)

    def build(self, name: str) -> Ranker | None:
        try:
            if name == "lexical":
                return LexicalRanker()
            if name == "eq1":
                return Eq1Ranker(self.semantic_store(), self.config.eq1_weights)
            scorer = self._scorer(name)
        except ScorerUnavailable as exc:
            self.unavailable.append(Unavailable(ranker=name, reason=str(exc)))
            self.log(f"[skip] {name}: {exc}")
            return None
        if isinstance(scorer, EmbeddingScorer):
            return LinearRanker(name, self.store(scorer), 0.0, 1.0)
        if isinstance(scorer, BlendScorer) and isinstance(scorer.semantic, EmbeddingScorer):
            return LinearRanker(name, self.store(scorer.semantic), scorer.w_lex, scorer.w_sem)
        return ScorerRanker(scorer=scorer, cache=self.cache, batch_size=self.config.batch_size, quiet=self.config.quiet)


def _pool_summary(corpus: Corpus, pool: Pool, tops: dict[str, Top1], groups: list[str], rng_name: str,
                  config: ProvenanceConfig, confusable: bool, draw: SeedDraw | None = None) -> PoolSummary:
    """Top-1 accuracy (and fooled rate) with clustered CIs; rankers share the draws, so `vs_lexical` is paired."""
    n = corpus.n_units
    gen = lambda: slice_rng(config.seed, rng_name)  # noqa: E731  (same draws for every ranker)
    base = pool.random_baseline(n)
    rankers: dict[str, RankerTop1] = {}
    lex = tops.get("lexical")
    for name, t in tops.items():
        ok = ~t.undefined
        g = [groups[i] for i in np.flatnonzero(ok)]
        correct = pool.gold[t.entry].astype(np.float64)
        rows = [correct[ok]] + ([pool.distractor[t.entry][ok].astype(np.float64)] if confusable else [])
        ests = clustered_means(np.vstack(rows), g, n_boot=config.n_boot, rng=gen())
        vs_lexical = None
        if lex is not None and name != "lexical":
            both = ok & ~lex.undefined
            diff = correct[both] - pool.gold[lex.entry][both]
            vs_lexical = clustered_means(diff, [groups[i] for i in np.flatnonzero(both)],
                                         n_boot=config.n_boot, rng=gen())[0]
        rankers[name] = RankerTop1(top1=ests[0], n_tied=int(t.tied.sum()), n_undefined=int(t.undefined.sum()),
                                   fooled=ests[1] if confusable else None, vs_lexical=vs_lexical)
    return PoolSummary(n_units=n, n_groups=len(set(groups)), n_entries=len(pool), mean_pool_size=float(len(pool) / n),
                       random_baseline=clustered_means(base, groups, n_boot=config.n_boot, rng=gen())[0],
                       rankers=rankers, draw=draw)


def _spread(values: list[float]) -> Spread:
    v = np.asarray(values, dtype=np.float64)
    return Spread(mean=float(v.mean()), sd=float(v.std(ddof=1)) if v.size > 1 else 0.0,
                  min=float(v.min()), max=float(v.max()), per_seed=v.tolist())


def _rank_all(corpus: Corpus, pool: Pool, rankers: list[Ranker]) -> dict[str, Top1]:
    terms = PoolTerms(corpus, pool)
    return {r.name: top1(pool, r.scores(terms), corpus.tiebreak, corpus.n_units) for r in rankers}


def run_dataset(pset: ProvenanceSet, config: ProvenanceConfig, rankers: list[Ranker],
                sweep_store: EmbeddingStore | None, log: Callable[[str], None]) -> DatasetProvenance:
    examples = [e for e in pset.examples if e.gold]
    skipped = dict(pset.skipped)
    no_gold = len(pset.examples) - len(examples)
    if no_gold:
        skipped["no_gold_passage"] = no_gold
        skipped["units_of_examples_without_gold"] = sum(len(e.units) for e in pset.examples if not e.gold)
    if not examples:
        raise ValueError("no example has a gold passage: top-1 accuracy is undefined")
    name = examples[0].dataset
    corpus = Corpus.build(examples)
    groups = corpus.unit_group
    log(f"{name}: {len(examples)} examples, {corpus.n_units} units, {len(corpus.clean)} (unit, passage) entries, "
        f"{len(corpus.texts)} distinct passage texts")
    sweep: list[Ranker] = ([LinearRanker(f"alpha={a:g}", sweep_store, a, 1.0 - a) for a in config.alphas or ()]
                           if sweep_store else [])
    clean_tops = _rank_all(corpus, corpus.clean, rankers + sweep)
    main = {r.name: clean_tops[r.name] for r in rankers}
    clean = _pool_summary(corpus, corpus.clean, main, groups, f"{name}:clean", config, False)
    sweep_clean = _pool_summary(corpus, corpus.clean, {r.name: clean_tops[r.name] for r in sweep}, groups,
                                f"{name}:clean", config, False) if sweep else None
    conf_seeds: list[PoolSummary] = []
    sweep_conf: dict[str, dict[str, list[float]]] = {r.name: {"top1": [], "fooled": []} for r in sweep}
    if config.confusable_k > 0:
        for s in range(config.seeds):
            rng = np.random.default_rng([config.seed, s])
            cand = sample_candidates(len(corpus.texts), config.candidate_cap, rng)
            idx, jac = find_distractors(corpus.unit_tokens, corpus.unit_example, corpus.text_tokens, corpus.text_owner,
                                        config.confusable_k, cand)
            pool = corpus.with_distractors(idx)
            tops = _rank_all(corpus, pool, rankers + sweep)
            found = idx >= 0
            draw = SeedDraw(seed=s, n_candidates=int(cand.size),
                            units_short_of_k=int((found.sum(axis=1) < config.confusable_k).sum()),
                            mean_distractor_jaccard=float(jac[found].mean()) if found.any() else None)
            conf_seeds.append(_pool_summary(corpus, pool, {r.name: tops[r.name] for r in rankers}, groups,
                                            f"{name}:confusable:{s}", config, True, draw))
            for r in sweep:
                t = tops[r.name]
                sweep_conf[r.name]["top1"].append(float(pool.gold[t.entry].mean()))
                sweep_conf[r.name]["fooled"].append(float(pool.distractor[t.entry].mean()))
            log(f"{name}: confusable seed {s}: {cand.size} candidates, k={config.confusable_k}")
    confusable = Confusable(
        k=config.confusable_k, seeds=config.seeds, candidate_cap=config.candidate_cap, per_seed=conf_seeds,
        summary={r.name: RankerSpread(top1=_spread([c.rankers[r.name].top1.estimate for c in conf_seeds]),
                                      fooled=_spread([_fooled(c, r.name) for c in conf_seeds]))
                 for r in rankers} if conf_seeds else {},
        random_baseline=_spread([c.random_baseline.estimate for c in conf_seeds]) if conf_seeds else None)
    alpha_sweep = None
    if sweep and sweep_store is not None and sweep_clean is not None:  # all three or none
        spreads = {r.name: (_spread(sweep_conf[r.name]["top1"]), _spread(sweep_conf[r.name]["fooled"]))
                   for r in sweep} if conf_seeds else {}
        alpha_sweep = AlphaSweep(
            formula=f"alpha*lexical + (1-alpha)*[{sweep_store.signature}]", alpha=list(config.alphas or ()),
            clean=[sweep_clean.rankers[r.name].top1 for r in sweep],
            series=SweepSeries(
                alpha=list(config.alphas or ()),
                clean_top1=[sweep_clean.rankers[r.name].top1.estimate for r in sweep],
                confusable_top1_mean=[spreads[r.name][0].mean for r in sweep] if conf_seeds else None,
                confusable_top1_sd=[spreads[r.name][0].sd for r in sweep] if conf_seeds else None,
                confusable_fooled_mean=[spreads[r.name][1].mean for r in sweep] if conf_seeds else None))
    return DatasetProvenance(dataset=name, data=pset.origin, skipped=skipped, n_examples=len(examples),
                             n_units=corpus.n_units, n_passages=len(corpus.clean),
                             n_distinct_texts=len(corpus.texts), clean=clean, confusable=confusable,
                             alpha_sweep=alpha_sweep)


def _fooled(pool: PoolSummary, name: str) -> float:
    fooled = pool.rankers[name].fooled
    return fooled.estimate if fooled is not None else float("nan")


@dataclass(frozen=True)
class ProvenanceResult:
    """A provenance run; it gets its run id when the result is built."""

    results: ProvenanceRun

    def __post_init__(self) -> None:
        if not self.results.run_id:
            object.__setattr__(self, "results", replace(self.results, run_id=new_run_id()))

    def save(self, out: str | Path) -> Path:
        """provenance.json, written whole."""
        path = check_out_dir(out, names=("provenance.json",))
        path.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path / "provenance.json", sealed_json(to_record(self.results)))
        return path / "provenance.json"


def run_provenance(sets: list[ProvenanceSet], config: ProvenanceConfig | None = None,
                   log: Callable[[str], None] = print) -> ProvenanceResult:
    """Run the diagnostic on each loaded set separately (datasets are never pooled)."""
    config = config or ProvenanceConfig()
    cache = ScoreCache(config.cache_path)
    try:
        factory = _Rankers(config, cache, log)
        rankers = [r for r in (factory.build(n) for n in config.rankers) if r is not None]
        if len({r.name for r in rankers}) != len(rankers):
            raise ValueError(f"--rankers names a ranker twice: {', '.join(config.rankers)}")
        if config.alphas is None:
            embedded = any(st.scorer.name == config.semantic for st in factory.stores.values())
            config = replace(config, alphas=ALPHAS if embedded else ())
        try:
            sweep_store = factory.semantic_store() if config.alphas else None
        except ScorerUnavailable as exc:
            factory.unavailable.append(Unavailable(ranker="alpha_sweep", reason=str(exc)))
            log(f"[skip] alpha sweep: {exc}")
            sweep_store = None
        datasets = [run_dataset(s, config, rankers, sweep_store, log) for s in sets]
        results = ProvenanceRun(
            tool=tool_info(),
            construct="provenance",
            config=ProvenanceSettings(
                rankers=[r.name for r in rankers], signatures={r.name: r.signature for r in rankers},
                semantic=config.semantic, eq1_weights=dict(vars(config.eq1_weights)),
                confusable_k=config.confusable_k, seeds=config.seeds, candidate_cap=config.candidate_cap,
                n_boot=config.n_boot, seed=config.seed, ci="95% percentile, clustered bootstrap over example groups",
                tie_break="smaller CRC-32 of the passage text, then pool order"),
            unavailable=list(factory.unavailable),
            embedding_truncation={sig: Truncation(**st.truncation()) for sig, st in factory.stores.items()},
            scorer_failures={r.name: ScorerFailures(failed_pairs=r.failures, truncated_pairs=r.truncated_pairs)
                             for r in rankers if isinstance(r, ScorerRanker)},
            datasets=datasets,
        )
    finally:
        cache.close()
    return ProvenanceResult(results)
