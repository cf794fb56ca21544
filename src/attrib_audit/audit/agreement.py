"""`agree`: agreement between two raters (judges or the human labels): Cohen's κ per slice with clustered CIs.

A rater is `human` (the labels), a scorer with a discrete label column (`NAME__label`,
e.g. judge-label), or any other scorer binarised at a threshold. Rows where either
rater has no rating (a failed judgement) are left out and counted.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from attrib_audit.data.errors import DataError
from attrib_audit.errors import InputError
from attrib_audit.files.jsonfile import read_json, sealed_json
from attrib_audit.files.outdir import run_id_of, write_text_atomic
from attrib_audit.files.records import from_record, to_record
from attrib_audit.stats.agreement import clustered_kappa_ci, confusion_matrix
from attrib_audit.stats.bootstrap import DEFAULT_B, slice_rng

if TYPE_CHECKING:
    import pandas as pd

LABELS = (0, 1)  # 0 = not attributable, 1 = attributable


def ratings(frame: pd.DataFrame, name: str, threshold: float) -> tuple[np.ndarray, str]:
    """(0/1 ratings with -1 for missing, how they were derived) for one rater."""
    if name == "human":
        return frame["label"].to_numpy(np.int64), "human labels"
    label_col = f"{name}__label"
    if label_col in frame.columns:
        lab = frame[label_col].to_numpy(object)
        known = {"attributable": 1, "not_attributable": 0}
        bad = [v for v in lab if v is not None and v == v and v not in known]
        if bad:
            raise DataError(f"scores.parquet column {label_col!r} holds unknown label {bad[0]!r}")
        return np.array([known.get(v, -1) if isinstance(v, str) else -1 for v in lab], dtype=np.int64), \
            f"discrete label column {label_col}"
    if name not in frame.columns:
        raters = ["human"] + [c for c in frame.columns if "__" not in c and c not in
                              ("id", "dataset", "source", "slice", "label", "group", "construct", "system", "weight")]
        raise DataError(f"scores.parquet has no scorer {name!r}; raters here: {', '.join(raters)}")
    s = frame[name].to_numpy(np.float64)
    return np.where(np.isfinite(s), (s >= threshold).astype(np.int64), -1), f"score >= {threshold:g}"


@dataclass(frozen=True, kw_only=True)
class Confusion:
    """Counts of (a's rating, b's rating): rows a, columns b, in the order of `labels`."""

    rows: str = "a"
    cols: str = "b"
    labels: tuple[str, str] = ("not_attributable", "attributable")
    counts: tuple[tuple[int, int], tuple[int, int]]


@dataclass(frozen=True, kw_only=True)
class Kappa:
    """Cohen's κ of two raters on one slice (or all rows), with its clustered-bootstrap 95% CI."""

    slice: str | None = field(default=None, metadata={"skip_default": True})  # None: every row
    kappa: float  # NaN where chance agreement is 1 (undefined)
    ci_low: float
    ci_high: float
    n: int  # rows both raters rated
    n_groups: int
    n_excluded: int  # rows either rater has no rating for
    raw_agreement: float | None  # None with no rows
    n_boot_dropped: int
    confusion: Confusion


@dataclass(frozen=True, kw_only=True)
class Agreement:
    """κ(a, b) overall and per slice: one comparison of agreement.json."""

    # the scores' run id; agreement.json writes it once for all its comparisons, so there it is left out
    run_id: str | None = field(default=None, metadata={"skip_default": True})
    a: str
    b: str
    a_from: str  # how a's ratings were derived
    b_from: str
    n_boot: int
    seed: int
    ci: str
    overall: Kappa
    slices: tuple[Kappa, ...]


@dataclass(frozen=True, kw_only=True)
class AgreementFile:
    """agreement.json: the comparisons drawn from one run's scores, one per (a, b)."""

    run_id: str | None
    pairs: list[Agreement]


def agreement_record(raw: Any, where: str | Path, error: type[InputError] = InputError, *,
                     key: str = "") -> AgreementFile:
    """Parsed agreement.json as its records, every value checked (one line naming the file and key otherwise).

    A file written by earlier versions (one comparison at the top level, or inside an older results.json) reads as
    a file of that one comparison.
    """
    if isinstance(raw, dict) and "pairs" not in raw:
        one = from_record(Agreement, raw, where=str(where), key=key, error=error)
        return AgreementFile(run_id=one.run_id, pairs=[replace(one, run_id=None)])
    return from_record(AgreementFile, raw, where=str(where), key=key, error=error)


def _one(a: np.ndarray, b: np.ndarray, groups: np.ndarray, n_boot: int, rng: np.random.Generator,
         sl: str | None = None) -> Kappa:
    ok = (a >= 0) & (b >= 0)
    est = clustered_kappa_ci(a[ok], b[ok], groups[ok], labels=LABELS, n_boot=n_boot, seed=rng)
    _, cm = confusion_matrix(a[ok], b[ok], labels=LABELS)
    (c00, c01), (c10, c11) = cm.tolist()
    return Kappa(slice=sl, kappa=est.estimate, ci_low=est.ci_low, ci_high=est.ci_high, n=est.n, n_groups=est.n_groups,
                 n_excluded=int((~ok).sum()), raw_agreement=float(np.mean(a[ok] == b[ok])) if ok.any() else None,
                 n_boot_dropped=est.n_boot_dropped, confusion=Confusion(counts=((c00, c01), (c10, c11))))


def agreement(results_dir: str | Path, a: str, b: str, *, threshold: float = 0.5, n_boot: int = DEFAULT_B,
              seed: int = 0) -> Agreement:
    """κ(a, b) overall and per slice of DIR/scores.parquet, added to DIR/agreement.json."""
    import pandas as pd

    path = Path(results_dir) / "scores.parquet"
    if not path.exists():
        raise DataError(f"{path} not found: run `attrib-audit audit ... --out {results_dir}` first")
    try:
        frame = pd.read_parquet(path)
    except (OSError, ValueError) as exc:  # arrow errors are OSError/ValueError subclasses
        raise DataError(f"{path}: not a readable scores file ({' '.join(str(exc).split())[:200]})") from None
    run_id = run_id_of(path)
    recorded = run_id_of(Path(results_dir) / "results.json")
    if run_id and recorded and run_id != recorded:
        raise DataError(f"{path} is from run {run_id}, but results.json beside it from run {recorded}: "
                        "rerun the audit into this folder")
    groups = (frame["group"] if "group" in frame.columns else frame["id"]).astype(str).to_numpy(object)
    ra, how_a = ratings(frame, a, threshold)
    rb, how_b = ratings(frame, b, threshold)
    slices = frame["slice"].astype(str).to_numpy(object)
    out = Agreement(run_id=run_id, a=a, b=b, a_from=how_a, b_from=how_b, n_boot=n_boot, seed=seed,
                    ci="95% percentile, clustered bootstrap over `group`",
                    overall=_one(ra, rb, groups, n_boot, slice_rng(seed, "__overall__")),
                    slices=tuple(_one(ra[slices == sl], rb[slices == sl], groups[slices == sl], n_boot,
                                      slice_rng(seed, sl), sl) for sl in sorted(set(slices))))
    _save(Path(results_dir) / "agreement.json", out)
    return out


def _save(path: Path, comparison: Agreement) -> None:
    """agreement.json keeps one entry per (a, b) of the same run: rerunning a comparison replaces it, others stay;
    comparisons of another run's scores (another run id) are dropped."""
    run_id = comparison.run_id
    kept = (agreement_record(read_json(path, DataError), path, DataError).pairs
            if path.exists() and run_id_of(path) == run_id else [])
    kept = [c for c in kept if (c.a, c.b) != (comparison.a, comparison.b)] + [replace(comparison, run_id=None)]
    write_text_atomic(path, sealed_json(to_record(AgreementFile(run_id=run_id, pairs=kept))))
