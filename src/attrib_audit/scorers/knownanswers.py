"""The known-answer check: does a scorer rank clearly supported pairs above clearly unsupported ones?

A model scorer can load and run yet score backwards: a head whose label map is read at the wrong index, an
inverted plugin, premise and hypothesis swapped. Real weights show that only on data with answers, so every
scorer (built-in or plugin) can be run on a small packaged set written for this check (`knownanswers.jsonl`:
16 short passages, each with clearly supported claims and claims the passage contradicts or never mentions;
our own text, shipped under the package's licence). The rule (`RULE`) is deliberately lenient: a working
scorer clears it easily, a backwards or noise scorer cannot.

The last result per scorer name is kept in `$ATTRIB_AUDIT_HOME/models_check.json` (sealed: an edited file is
ignored), so `models list` shows it and a long run skips a check its exact scorer signature already passed.
"""
from __future__ import annotations

import hashlib
import json
import math
import time
import warnings
from dataclasses import asdict, dataclass, field, fields
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Sequence

import numpy as np

from attrib_audit.errors import AuditError
from attrib_audit.files.jsonfile import is_sealed, sealed_json
from attrib_audit.files.outdir import write_text_atomic
from attrib_audit.files.paths import home
from attrib_audit.files.regular import read_regular
from attrib_audit.scorers.base import ScoreBatch, Scorer, as_scorer
from attrib_audit.stats.bootstrap import DEFAULT_B, clustered_auroc_ci

MIN_AUROC = 0.80  # a working scorer reaches ~0.95-1.0 on this set (lexical 1.00, minilm 0.94)
CHANCE = 0.5
MAX_FAILED = 0.10  # more failed pairs than this (judge refusals, errors) and the check cannot tell
N_BOOT = DEFAULT_B
LONG_RUN = 1000  # a scorer about to score more uncached pairs than this is checked first (engine.gate)
RULE = (f"pass when AUROC ≥ {MIN_AUROC:.2f} and the lower end of its 95% clustered-bootstrap CI (clusters = "
        f"passages) > {CHANCE:.2f}, with at most {MAX_FAILED:.0%} of the pairs failed")


class KnownAnswerError(AuditError):
    """A scorer failed the known-answer check: it does not rank supported pairs clearly above unsupported ones."""

    exit_code = 1
    kind = "known-answer check failed"


@dataclass(frozen=True, kw_only=True)
class KnownPair:
    id: str
    group: str  # the passage: claims on one passage share it (the bootstrap's cluster)
    kind: str  # supported | contradicted | not_mentioned
    label: int
    claim: str
    evidence: str


def _set_path():
    return resources.files("attrib_audit") / "scorers" / "knownanswers.jsonl"


@lru_cache(maxsize=1)
def known_pairs() -> tuple[KnownPair, ...]:
    rows = [json.loads(line) for line in _set_path().read_text(encoding="utf-8").splitlines() if line.strip()]
    return tuple(KnownPair(**r) for r in rows)


@lru_cache(maxsize=1)
def set_digest() -> str:
    """sha256 of the packaged set: a stored result for another version of the set does not count."""
    return hashlib.sha256(_set_path().read_bytes()).hexdigest()[:16]


@dataclass(frozen=True, kw_only=True)
class CheckResult:
    scorer: str
    signature: str
    auroc: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    n_failed: int
    passed: bool
    mean_by_kind: dict[str, float | None] = field(default_factory=dict)
    set_digest: str = ""
    checked_at: str = ""

    def line(self) -> str:
        """One line: verdict, AUROC [CI] and the mean score per kind of pair."""
        verdict = "pass" if self.passed else "FAIL"
        auc = "n/a" if self.auroc is None else f"{self.auroc:.3f} [{self.ci_low:.3f}, {self.ci_high:.3f}]"
        means = ", ".join(f"{k} {'n/a' if v is None else f'{v:.3f}'}" for k, v in self.mean_by_kind.items())
        failed = f", {self.n_failed} failed" if self.n_failed else ""
        return f"{self.scorer}: {verdict}: AUROC {auc} on {self.n} known pairs{failed}; mean score: {means}"


def _score(scorer: Scorer, pairs: Sequence[KnownPair]) -> ScoreBatch:
    claims, evidences = [p.claim for p in pairs], [p.evidence for p in pairs]
    scorer = as_scorer(scorer)
    bs = max(1, int(scorer.batch_size or Scorer.batch_size))
    parts = []
    for i in range(0, len(pairs), bs):
        c, e = claims[i:i + bs], evidences[i:i + bs]
        parts.append(scorer.score(c, e, questions=[None] * len(c)) if scorer.wants_questions  # type: ignore[call-arg]
                     else scorer.score(c, e))
    batch = ScoreBatch.concat(parts)
    if len(batch) != len(pairs):
        raise KnownAnswerError(f"{scorer.name}: returned {len(batch)} scores for {len(pairs)} pairs")
    return batch


def judge(name: str, signature: str, scores: np.ndarray, pairs: Sequence[KnownPair] | None = None) -> CheckResult:
    """Apply RULE to scores of the known pairs (NaN = a failed pair)."""
    pairs = pairs or known_pairs()
    s = np.asarray(scores, dtype=np.float64)
    y = np.array([p.label for p in pairs])
    ok = np.isfinite(s)
    kinds = np.array([p.kind for p in pairs])
    means = {}
    for k in ("supported", "contradicted", "not_mentioned"):
        sel = ok & (kinds == k)
        means[k] = float(s[sel].mean()) if sel.any() else None
    n_failed = int((~ok).sum())
    auc = lo = hi = None
    if ok.any() and 0 < y[ok].sum() < ok.sum():
        est = clustered_auroc_ci(s[ok], y[ok], [p.group for p, keep in zip(pairs, ok) if keep], n_boot=N_BOOT, seed=0)
        auc, lo, hi = est.estimate, est.ci_low, est.ci_high
    passed = (auc is not None and lo is not None and math.isfinite(lo) and auc >= MIN_AUROC and lo > CHANCE
              and n_failed <= MAX_FAILED * len(pairs))
    return CheckResult(scorer=name, signature=signature, auroc=auc, ci_low=lo, ci_high=hi, n=int(ok.sum()),
                       n_failed=n_failed, passed=bool(passed), mean_by_kind=means, set_digest=set_digest(),
                       checked_at=time.strftime(CHECKED_AT))


def check_scorer(scorer: Scorer, name: str | None = None) -> CheckResult:
    """Score the packaged known-answer set with `scorer` and apply RULE (no cache: the check runs the model)."""
    pairs = known_pairs()
    batch = _score(scorer, pairs)
    return judge(name or scorer.name, scorer.signature, batch.scores, pairs)


def failure_message(result: CheckResult) -> str:
    return (f"{result.line()}; rule: {RULE}. The scorer ranks supported pairs no better than chance or backwards: "
            "check its label map, the input order (premise = evidence) and the weights "
            f"(`attrib-audit models check {result.scorer}` reruns it)")


# ---- the last result per scorer ---------------------------------------------------------------------------------

def results_path() -> Path:
    return home() / "models_check.json"


CHECKED_AT = "%Y-%m-%d %H:%M:%S"  # local time, as `models list` shows it
MAX_RESULTS_BYTES = 1 << 20  # a few hundred scorers' results; a larger file is not one this module wrote


def _unit(x: object) -> bool:
    return isinstance(x, float) and 0.0 <= x <= 1.0


def _count(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and 0 <= x <= 1_000_000


def _checked(name: object, raw: object) -> CheckResult | None:
    """One stored result, field by field (the file is sealed by an unkeyed digest, which catches accidents, not
    tampering); None when any field is not what `record` writes, or it is dated in the future."""
    if not isinstance(name, str) or not isinstance(raw, dict) or set(raw) != {f.name for f in fields(CheckResult)}:
        return None
    kinds = raw["mean_by_kind"]
    ok = (raw["scorer"] == name and all(isinstance(raw[k], str) for k in ("signature", "set_digest", "checked_at"))
          and (all(raw[k] is None for k in ("auroc", "ci_low", "ci_high"))
               or all(_unit(raw[k]) for k in ("auroc", "ci_low", "ci_high")))
          and _count(raw["n"]) and _count(raw["n_failed"]) and isinstance(raw["passed"], bool)
          and isinstance(kinds, dict)
          and all(isinstance(k, str) and (v is None or isinstance(v, float) and math.isfinite(v))
                  for k, v in kinds.items()))
    if not ok:
        return None
    try:
        when = time.mktime(time.strptime(raw["checked_at"], CHECKED_AT))
    except (ValueError, OverflowError):
        return None
    if when > time.time() + 86_400:  # a date to come was not written by a check
        return None
    return CheckResult(**raw)


def last_results() -> dict[str, CheckResult]:
    """The stored results by scorer name; a missing, unreadable, oversized, non-regular or edited (unsealed) file
    counts as none, and an entry of the wrong shape is left out with a one-line warning (its scorer is checked
    again when next needed)."""
    path = results_path()
    try:
        data = json.loads(read_regular(path, MAX_RESULTS_BYTES))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, RecursionError) as exc:
        warnings.warn(f"{path} ignored ({exc.__class__.__name__}): known-answer checks run again when needed",
                      stacklevel=2)
        return {}
    if not isinstance(data, dict) or not is_sealed(data) or not isinstance(data.get("results"), dict):
        warnings.warn(f"{path} ignored (not a sealed file of check results): known-answer checks run again when "
                      "needed", stacklevel=2)
        return {}
    out = {}
    for name, raw in data["results"].items():
        checked = _checked(name, raw)
        if checked is None:
            warnings.warn(f"{path}: the entry for {str(name)[:80]!r} is not a check result; ignored (checked again "
                          "when next needed)", stacklevel=2)
            continue
        out[name] = checked
    return out


def record(result: CheckResult) -> None:
    """Keep `result` as its scorer's last check (written whole or not at all); a home that cannot hold it (a file,
    read-only) costs a one-line warning: the check simply runs again next time."""
    stored = {n: asdict(r) for n, r in last_results().items()}
    stored[result.scorer] = asdict(result)
    path = results_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # attrib-audit's own record in its home folder: replaced even when an older version wrote it
        write_text_atomic(path, sealed_json({"rule": RULE, "results": stored}), force=True)
    except OSError as exc:
        warnings.warn(f"could not keep the check result in {path} ({exc.strerror or exc.__class__.__name__})",
                      stacklevel=2)


def passed_before(name: str, signature: str) -> bool:
    """Whether this exact scorer (name and signature) passed the current set's check."""
    r = last_results().get(name)
    return bool(r and r.passed and r.signature == signature and r.set_digest == set_digest())


def summary(name: str) -> str | None:
    """What `models list` prints about a scorer's last check, or None if it was never checked."""
    r = last_results().get(name)
    if r is None:
        return None
    auc = "n/a" if r.auroc is None else f"{r.auroc:.2f} [{r.ci_low:.2f}, {r.ci_high:.2f}]"
    return f"last check {r.checked_at}: {'pass' if r.passed else 'FAIL'}, AUROC {auc} on {r.n} known pairs"
