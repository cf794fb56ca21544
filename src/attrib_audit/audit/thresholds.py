"""Deployable thresholds: the model of thresholds.json, its one writer and one reader, and what fills it.

For a gate "pass the answer when score ≥ t", per scorer and slice: the threshold Learn-then-Test certifies for
the team's target (or none, with the reason, and the labels that would certify one), the naive empirical
threshold people pick, both thresholds' in-sample and cross-fitted held-out rates, each slice's thresholds
applied to every other slice of its construct (the transfer rows), and the scores' calibration. The
statistics are stats.threshold and stats.calibration; this module only gathers slices and records.

The scores come from an audit folder (`scored_from_results`: scores.parquet and results.json, weights
included, nothing rescored) or from a freshly scored table (`scored_from_table`). thresholds.json beside an
audit carries that audit's run id, so the report never draws thresholds of another run's scores.
"""
from __future__ import annotations

import time
import zlib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from attrib_audit.audit.results import AuditResults, ToolInfo, Unavailable, tool_info
from attrib_audit.audit.saved import read_results
from attrib_audit.data.origin import DataEntry
from attrib_audit.data.records import PairTable
from attrib_audit.errors import InputError, UsageError
from attrib_audit.files.jsonfile import SavedDict, read_json, sealed_json
from attrib_audit.files.outdir import run_id_of
from attrib_audit.files.records import from_record, to_record
from attrib_audit.scorers.base import ScoreBatch
from attrib_audit.stats.bootstrap import DEFAULT_B, slice_rng
from attrib_audit.stats.calibration import (
    METHODS,
    CalibrationCell,
    Recalibration,
    Reliability,
    calibration_transfer,
    recalibrate,
    reliability,
)
from attrib_audit.stats.joint import JointCertificate, certify_joint
from attrib_audit.stats.threshold import (
    UNITS,
    Certificate,
    GateRates,
    HeldOut,
    LabelNeed,
    NaiveThreshold,
    Target,
    TransferCell,
    slice_thresholds,
    transfer_matrix,
)
from attrib_audit.stats.types import Estimate, LabelledScores

FILE = "thresholds.json"


# --- the model of thresholds.json ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class InSample:
    """Both thresholds' rates on the pairs that chose them (None where that threshold does not exist)."""

    certified: GateRates | None
    naive: GateRates | None


@dataclass(frozen=True)
class TransferRow:
    """This slice's thresholds applied to every slice of its construct (one row of each transfer matrix)."""

    construct: str
    slices: list[str]  # the matrix's slices, in order
    certified: list[TransferCell]  # empty when this slice certifies nothing
    naive: list[TransferCell]


@dataclass(frozen=True)
class Recalibrated:
    """With --recalibrate: the held-out ECE of a map fitted per fold, or why there is none."""

    recalibration: Recalibration | None
    recalibration_reason: str | None


@dataclass(frozen=True)
class MapTransfer:
    """With --recalibrate: this slice's map applied to every slice of its construct, or why it is not."""

    transfer: list[CalibrationCell] | None
    transfer_reason: str | None


@dataclass(frozen=True)
class CalibrationRecord:
    """The scores read as P(supported): a reliability diagram (or why none), and with --recalibrate the maps."""

    reliability: Reliability | None
    reason: str | None  # why there is no reliability diagram (scores not in [0, 1], one class)
    recalibrated: Recalibrated | None = field(default=None, metadata={"inline": True, "skip_default": True})
    map_transfer: MapTransfer | None = field(default=None, metadata={"inline": True, "skip_default": True})


@dataclass(frozen=True)
class Usefulness:
    """Whether a certified gate is any use: the share of supported answers it passes (its cost) against a floor."""

    supported_pass: Estimate  # in-sample, at the certified threshold
    precision: Estimate
    floor: float  # --min-useful-pass
    useless: bool  # supported_pass below the floor


@dataclass(frozen=True, kw_only=True)
class ThresholdEntry:
    """One scorer on one slice."""

    scorer: str
    slice: str
    construct: str  # a construct, "unspecified" or "mixed:a+b"
    status: str  # ok | one_class | no_scores
    n: int  # pairs with a score (failed rows left out, counted in n_failed)
    n_pos: int
    n_groups: int
    n_failed: int
    weighted: bool  # Horvitz–Thompson weights (a sampled file)
    unit: str | None  # the unit of exchangeability: pair or group
    assumption: str | None  # what the guarantee assumes, in words
    target: Target
    delta: float
    certified_threshold: float | None
    certified_reason: str | None  # one line when none is certified
    naive_threshold: float | None
    naive_reason: str | None
    certificate: Certificate | None
    naive: NaiveThreshold | None
    in_sample: InSample
    held_out: HeldOut | None
    label_need: LabelNeed | None  # labels that would certify the threshold picked by eye
    fewest_labels: LabelNeed | None  # labels that would certify any candidate at all
    transfer: TransferRow | None
    transfer_reason: str | None
    calibration: CalibrationRecord
    usefulness: Usefulness | None = None  # the certified gate's supported-pass share against the floor
    joint: JointCertificate | None = None  # with --min-supported-pass: both targets certified at once


@dataclass(frozen=True, kw_only=True)
class ThresholdConfig:
    target: Target
    delta: float
    unit: str  # as asked: auto, pair or group
    folds: int
    n_boot: int
    seed: int
    level: float
    n_bins: int
    recalibrate: str | None
    scorers: list[str]
    slice_by: str
    min_useful_pass: float = 0.5
    min_supported_pass: float | None = None


@dataclass(frozen=True, kw_only=True)
class AuditRef:
    """The earlier audit whose saved scores the thresholds were chosen on."""

    folder: str
    run_id: str


@dataclass(frozen=True, kw_only=True)
class ThresholdSource:
    """Where the scores came from: an earlier audit (`results`), or labelled inputs scored here (`data`, each
    scorer's signature, the scorers that could not run)."""

    results: AuditRef | None = field(default=None, metadata={"skip_default": True})
    data: list[DataEntry] | None = field(default=None, metadata={"skip_default": True})
    scorers: dict[str, str] | None = field(default=None, metadata={"skip_default": True})
    unavailable: list[Unavailable] | None = field(default=None, metadata={"skip_default": True})


@dataclass(frozen=True, kw_only=True)
class ThresholdsResults:
    """thresholds.json, in the order of its keys (the file adds `digest` last)."""

    run_id: str  # the audit's run id (--results), or this run's own (a scored file)
    tool: ToolInfo
    source: ThresholdSource
    config: ThresholdConfig
    notes: list[str]
    entries: list[ThresholdEntry]
    elapsed_s: float


def to_json(results: ThresholdsResults) -> str:
    """thresholds.json's text: plain values (NaN → null), indented, sealed with a digest of the content."""
    return sealed_json(to_record(results))


def thresholds_file(where: str | Path, command: str = "read_thresholds",
                    error: type[InputError] = InputError) -> tuple[Path, SavedDict]:
    """thresholds.json (in the folder `where`, or the file `where`) as parsed, unchecked JSON and its path; a missing
    or unreadable file is one line naming `command`."""
    path = Path(where) / FILE if Path(where).is_dir() else Path(where)
    if not path.is_file():
        raise error(f"{command}: {path} not found; run `attrib-audit threshold --results DIR ...` first")
    return path, read_json(path, error)


def thresholds_record(raw: Mapping[str, Any], where: str | Path,
                      error: type[InputError] = InputError) -> ThresholdsResults:
    """Parsed thresholds.json as its records, every value checked: one line naming the file and key otherwise."""
    return from_record(ThresholdsResults, raw, where=str(where), error=error)


def read_thresholds(where: str | Path, command: str = "read_thresholds",
                    error: type[InputError] = InputError) -> ThresholdsResults:
    """thresholds.json (in the folder `where`, or the file `where`) as its records; a missing or unreadable file, or
    one whose values are not of the model's types, is one line naming `command` or the file and key."""
    path, raw = thresholds_file(where, command, error)
    return thresholds_record(raw, path, error)


# --- the scores thresholds are computed from ----------------------------------------------------------------------

@dataclass(frozen=True, eq=False, kw_only=True)
class ScoredPairs:
    """Labelled pairs with each scorer's scores (NaN: failed), their slice, construct, group and weight."""

    slices: np.ndarray  # slice name per row
    constructs: np.ndarray  # construct per row ("unspecified" when undeclared)
    labels: np.ndarray
    groups: np.ndarray
    weights: np.ndarray | None  # 1/π of a sampled file
    scores: dict[str, np.ndarray]

    def slice_construct(self, sl: str) -> str:
        """The slice's construct, or mixed:a+b (as the audit names it)."""
        found = sorted(set(self.constructs[self.slices == sl].tolist()))
        return found[0] if len(found) == 1 else "mixed:" + "+".join(found)


def scored_from_table(table: PairTable, keys: Sequence[str], scores: Mapping[str, ScoreBatch]) -> ScoredPairs:
    return ScoredPairs(slices=np.asarray(keys, dtype=object).astype(str),
                       constructs=np.array([c or "unspecified" for c in table.constructs], dtype=object),
                       labels=table.labels.astype(np.int64), groups=np.asarray(table.groups, dtype=object).astype(str),
                       weights=table.weights,
                       scores={n: np.asarray(b.scores, dtype=np.float64) for n, b in scores.items()})


def scored_from_results(folder: str | Path, command: str = "threshold") -> tuple[ScoredPairs, AuditResults]:
    """An audit folder's saved scores (scores.parquet, its `weight` column included) and its results.json."""
    import pandas as pd

    folder = Path(folder)
    results = read_results(folder, command)
    path = folder / "scores.parquet"
    if not path.is_file():
        raise InputError(f"{command}: {path} not found; run `attrib-audit audit ... --out {folder}` again")
    try:
        frame = pd.read_parquet(path)
    except (OSError, ValueError) as exc:  # arrow errors are OSError/ValueError subclasses
        raise InputError(f"{command}: {path}: not a readable scores file "
                         f"({' '.join(str(exc).split())[:200]})") from None
    run_id, names = results.run_id, results.scorer_names
    if run_id_of(path) != run_id:
        raise InputError(f"{command}: {path} is from run {run_id_of(path)}, but results.json beside it from run "
                         f"{run_id}: rerun the audit into this folder")
    missing = [c for c in ("slice", "label", "group", "construct", *names) if c not in frame.columns]
    if missing:
        raise InputError(f"{command}: {path} has no column {missing[0]!r}; it is not the scores file of this audit")
    labels = frame["label"].to_numpy()
    if not np.isin(labels, (0, 1)).all():
        raise InputError(f"{command}: {path}: column 'label' holds values other than 0 and 1")
    weights = frame["weight"].to_numpy(np.float64) if "weight" in frame.columns else None
    if weights is not None and not (np.isfinite(weights).all() and (weights > 0).all()):
        raise InputError(f"{command}: {path}: column 'weight' must hold positive finite weights "
                         "(1/inclusion probability)")
    constructs = frame["construct"].astype(object).where(frame["construct"].notna(), None).to_numpy(object)
    return ScoredPairs(slices=frame["slice"].astype(str).to_numpy(object),
                       constructs=np.array([c or "unspecified" for c in constructs], dtype=object),
                       labels=labels.astype(np.int64), groups=frame["group"].astype(str).to_numpy(object),
                       weights=weights, scores={n: frame[n].to_numpy(np.float64) for n in names}), results


# --- computing it ---------------------------------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class ThresholdOptions:
    """What `threshold` computes: the target and its confidence, the unit, the resampling, calibration."""

    target: Target
    delta: float = 0.1
    unit: str = "auto"  # auto: groups where a slice's groups hold several pairs, else pairs
    folds: int = 5  # cross-fitting folds (whole groups)
    n_boot: int = DEFAULT_B
    seed: int = 0
    level: float = 0.95  # coverage of every rate's and ECE's CI
    n_bins: int = 10  # reliability diagram bins on [0, 1]
    recalibrate: str | None = None  # isotonic | platt: fitted on one part, judged on another
    scorers: tuple[str, ...] | None = None  # restrict to these
    min_useful_pass: float = 0.5  # a certified gate passing fewer supported answers than this is called useless
    min_supported_pass: float | None = None  # a second target, certified jointly with `target` (Learn-then-Test)

    def __post_init__(self) -> None:
        for flag, v in (("--min-useful-pass", self.min_useful_pass), ("--min-supported-pass", self.min_supported_pass)):
            if v is not None and not 0.0 <= v < 1.0:
                raise UsageError(f"{flag} must lie in [0, 1), got {v}")
        if not 0.0 < self.delta < 1.0:
            raise UsageError(f"--delta must lie strictly between 0 and 1, got {self.delta}")
        if self.unit not in UNITS:
            raise UsageError(f"--unit must be one of {', '.join(UNITS)}, not {self.unit!r}")
        if self.folds < 2:
            raise UsageError(f"--folds must be at least 2, got {self.folds}")
        if self.recalibrate is not None and self.recalibrate not in METHODS:
            raise UsageError(f"--recalibrate must be one of {', '.join(METHODS)}, not {self.recalibrate!r}")
        if self.n_boot < 1 or self.n_bins < 1 or not 0.0 < self.level < 1.0:
            raise UsageError("--n-boot and --n-bins must be positive and the CI level in (0, 1)")


def _stream(seed: int, sl: str, what: str) -> np.random.Generator:
    """A generator for one slice and one purpose, independent of the slice's threshold draws (slice_rng)."""
    return np.random.default_rng([int(seed), zlib.crc32(sl.encode("utf-8")), zlib.crc32(what.encode("utf-8"))])


def _calibration(data: LabelledScores, sl: str, opts: ThresholdOptions) -> CalibrationRecord:
    rel, reason = None, None
    try:
        rel = reliability(data, n_bins=opts.n_bins, level=opts.level, n_boot=opts.n_boot,
                          rng=_stream(opts.seed, sl, "reliability"))
    except ValueError as exc:  # scores not in [0, 1]: not probabilities
        reason = str(exc)
    if not opts.recalibrate:
        return CalibrationRecord(reliability=rel, reason=reason)
    try:
        recal = Recalibrated(recalibration=recalibrate(data, method=opts.recalibrate, folds=opts.folds,
                                                       n_bins=opts.n_bins, level=opts.level, n_boot=opts.n_boot,
                                                       rng=_stream(opts.seed, sl, "recalibration")),
                             recalibration_reason=None)
    except ValueError as exc:
        recal = Recalibrated(recalibration=None, recalibration_reason=str(exc))
    return CalibrationRecord(reliability=rel, reason=reason, recalibrated=recal)


def slice_data(pairs: ScoredPairs, name: str, sl: str) -> tuple[LabelledScores, int]:
    """One scorer's scores on one slice with their labels, groups and weights; failed rows dropped and counted."""
    rows = pairs.slices == sl
    s = pairs.scores[name][rows]
    ok = np.isfinite(s)
    w = None if pairs.weights is None else pairs.weights[rows][ok]
    return LabelledScores(s[ok], pairs.labels[rows][ok], pairs.groups[rows][ok], w), int((~ok).sum())


def _entry(name: str, sl: str, construct: str, data: LabelledScores, n_failed: int,
           opts: ThresholdOptions) -> ThresholdEntry:
    n_pos = int(data.labels.sum())
    status = "no_scores" if data.n == 0 else "ok" if 0 < n_pos < data.n else "one_class"
    n_groups = int(np.unique(np.asarray(data.groups)).size) if data.n else 0
    if status == "no_scores":
        reason = f"no scores: all {n_failed} pairs failed for {name}"
        return ThresholdEntry(
            scorer=name, slice=sl, construct=construct, status=status, n=data.n, n_pos=n_pos, n_groups=n_groups,
            n_failed=n_failed, weighted=data.weights is not None,
            unit=None, assumption=None, target=opts.target, delta=opts.delta, certified_threshold=None,
            certified_reason=reason, naive_threshold=None, naive_reason=reason, certificate=None, naive=None,
            in_sample=InSample(certified=None, naive=None), held_out=None, label_need=None, fewest_labels=None,
            transfer=None, transfer_reason=reason, calibration=CalibrationRecord(reliability=None, reason=reason),
            usefulness=None, joint=None)
    st = slice_thresholds(data, opts.target, opts.delta, folds=opts.folds, rng=slice_rng(opts.seed, sl),
                          unit=opts.unit, level=opts.level, n_boot=opts.n_boot)
    cert = st.certified
    joint = None
    if opts.min_supported_pass is not None:
        joint = certify_joint(data, opts.target, opts.min_supported_pass, opts.delta, unit=cert.unit,
                              method=cert.p_value_method)
    return ThresholdEntry(
        scorer=name, slice=sl, construct=construct, status=status, n=data.n, n_pos=n_pos, n_groups=n_groups,
        n_failed=n_failed, weighted=data.weights is not None,
        unit=cert.unit, assumption=cert.assumption, target=cert.target, delta=cert.delta,
        certified_threshold=cert.threshold, certified_reason=cert.reason, naive_threshold=st.naive.threshold,
        naive_reason=st.naive.reason, certificate=cert, naive=st.naive,
        in_sample=InSample(certified=st.certified_rates, naive=st.naive_rates), held_out=st.held_out,
        label_need=st.label_need, fewest_labels=st.fewest_labels, transfer=None, transfer_reason=None,
        calibration=_calibration(data, sl, opts), usefulness=usefulness(st.certified_rates, opts.min_useful_pass),
        joint=joint)


def usefulness(rates: GateRates | None, floor: float) -> Usefulness | None:
    """Whether a certified gate is any use: the share of supported answers it passes, against `floor`.

    Args:
        rates: the certified threshold's in-sample rates, or None when nothing is certified.
        floor: the least share of supported answers a useful gate passes.

    Returns:
        None without a certified gate; else the supported-pass and precision estimates, the floor and the verdict.
    """
    if rates is None:
        return None
    sp = rates.supported_pass
    useless = bool(np.isfinite(sp.estimate)) and sp.estimate < floor
    return Usefulness(supported_pass=sp, precision=rates.precision, floor=floor, useless=bool(useless))


def _transfer(entries: list[ThresholdEntry], datas: dict[str, LabelledScores], construct: str,
              opts: ThresholdOptions) -> list[ThresholdEntry]:
    """The entries of one scorer's two-class slices of one construct, with their transfer rows (matrices on shared
    draws) and, with --recalibrate, their maps applied to each other's slices."""
    names = [e.slice for e in entries]
    matrices = {kind: transfer_matrix({s: datas[s] for s in names},
                                      {e.slice: e.certified_threshold if kind == "certified" else e.naive_threshold
                                       for e in entries}, opts.target,
                                      level=opts.level, n_boot=opts.n_boot, seed=opts.seed)
                for kind in ("certified", "naive")}
    maps: dict[str, MapTransfer] = {}
    if opts.recalibrate:
        try:
            ct = calibration_transfer({s: datas[s] for s in names}, method=opts.recalibrate, folds=opts.folds,
                                      n_bins=opts.n_bins, level=opts.level, n_boot=opts.n_boot, seed=opts.seed)
        except ValueError as exc:
            maps = {s: MapTransfer(transfer=None, transfer_reason=str(exc)) for s in names}
        else:
            maps = {s: MapTransfer(transfer=[c for c in ct.cells if c.fitted_on == s], transfer_reason=None)
                    for s in names}
    out = []
    for e in entries:
        row = TransferRow(construct=construct, slices=names,
                          certified=[c for c in matrices["certified"].cells if c.fitted_on == e.slice],
                          naive=[c for c in matrices["naive"].cells if c.fitted_on == e.slice])
        calibration = replace(e.calibration, map_transfer=maps[e.slice]) if e.slice in maps else e.calibration
        out.append(replace(e, transfer=row, calibration=calibration))
    return out


def _transfer_reason(construct: str, two_class: int) -> str | None:
    if construct == "unspecified":
        return ("construct not declared (set --construct or a construct column): "
                "slices of unknown construct are never compared")
    if construct.startswith("mixed:"):
        return "the slice mixes constructs; constructs are never pooled"
    if two_class < 2:
        return f"the only two-class slice of construct {construct}: no other slice to apply its thresholds to"
    return None


def compute_thresholds(pairs: ScoredPairs, opts: ThresholdOptions, *, source: ThresholdSource, run_id: str,
                       slice_by: str) -> ThresholdsResults:
    """Every scorer × slice entry, and the transfer rows within each declared construct."""
    t0 = time.time()
    names = list(pairs.scores)
    if opts.scorers:
        unknown = [s for s in opts.scorers if s not in names]
        if unknown:
            raise UsageError(f"scorer {unknown[0]!r} is not among the scored ones ({', '.join(names)})")
        names = list(dict.fromkeys(opts.scorers))
    slices = sorted(set(pairs.slices.tolist()))
    constructs = {sl: pairs.slice_construct(sl) for sl in slices}
    entries: list[ThresholdEntry] = []
    for name in names:
        mine, datas = {}, {}
        for sl in slices:
            data, n_failed = slice_data(pairs, name, sl)
            datas[sl] = data
            mine[sl] = _entry(name, sl, constructs[sl], data, n_failed, opts)
        for c in dict.fromkeys(constructs.values()):
            group = [e for e in mine.values() if e.construct == c and e.status == "ok"]
            reason = _transfer_reason(c, len(group))
            if reason is None:
                mine.update((e.slice, e) for e in _transfer(group, datas, c, opts))
            for sl, e in mine.items():
                if e.construct == c and e.transfer is None and e.transfer_reason is None:
                    mine[sl] = replace(e, transfer_reason=reason or "one class in the slice: no threshold to transfer")
        entries += mine.values()
    weighted = pairs.weights is not None
    notes = [f"target: {opts.target.describe()} with probability ≥ {1 - opts.delta:g} (delta {opts.delta:g}), "
             "Learn-then-Test: candidate thresholds from the most conservative down, each tested with a valid p-value, "
             "fixed-sequence testing",
             "unit of exchangeability: " + ("as asked, " + opts.unit if opts.unit != "auto" else
                                             "the group where a slice's groups hold several pairs "
                                             "(its risk is the mean "
                                             "over groups), else the pair") + "; each entry states its own",
             f"held-out rates: thresholds fitted without each of up to {opts.folds} folds of whole groups, judged on "
             "that fold (cross-fitting)",
             "transfer: each slice's threshold applied to every slice of its construct; broken = the rate's CI lies "
             "wholly on the wrong side of the target"]
    if weighted:
        notes.append("weighted: Horvitz–Thompson (each pair weighs 1/inclusion probability), so every rate describes "
                     "the pool the labelled sample was drawn from")
    return ThresholdsResults(
        run_id=run_id, tool=tool_info(), source=source,
        config=ThresholdConfig(target=opts.target, delta=opts.delta, unit=opts.unit, folds=opts.folds,
                               n_boot=opts.n_boot, seed=opts.seed, level=opts.level, n_bins=opts.n_bins,
                               recalibrate=opts.recalibrate, scorers=names, slice_by=slice_by,
                               min_useful_pass=opts.min_useful_pass, min_supported_pass=opts.min_supported_pass),
        notes=notes, entries=entries, elapsed_s=round(time.time() - t0, 3))
