"""The typed results of an audit: the model of results.json, its one writer and its one reader.

`AuditResults` is results.json as data: frozen dataclasses whose fields, in order, are the file's keys
(files.records writes them and reads them back, checking every value against its type). `run_audit` builds it
whole, the run spec and the reproduce command included; nothing is added to it later. `to_json` is the one
writer (plain values, sealed with a digest) and audit.saved.read_results the one reader: `report`, `select`,
`systems`, `threshold`, `audit --check` and `plan --results` all read results.json through it, so a value of the
wrong type anywhere is one line naming the file and the key.

`AuditResult` is what `run_audit` returns in memory: those results plus the scores, the per-slice bootstraps
and the table, which `save` writes beside results.json (scores.parquet, bootstrap.npz), all with one run id.
"""
from __future__ import annotations

import json
import math
import platform
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

import numpy as np

from attrib_audit import __version__
from attrib_audit.data.origin import DataEntry, SkippedRow
from attrib_audit.data.records import PairTable
from attrib_audit.engine.runner import RunStats
from attrib_audit.engine.table import Unavailable
from attrib_audit.errors import InputError
from attrib_audit.external.precomputed import PrecomputedRecord
from attrib_audit.external.sources import ScoreSource
from attrib_audit.files.jsonfile import SavedDict, read_json, sealed_json
from attrib_audit.files.outdir import PARQUET_RUN_KEY, RUN_ARTEFACTS, staged_dir
from attrib_audit.files.records import to_record
from attrib_audit.scorers.base import ScoreBatch
from attrib_audit.stats.bootstrap import BootstrapAUROC
from attrib_audit.stats.systems import SystemLevel
from attrib_audit.stats.types import Estimate

if TYPE_CHECKING:  # these records import the statistics (scipy) or the scorers: bound at read time by
    # audit.saved.bind_records
    from attrib_audit.audit.correlations import CorrelationSection, CutSensitivity, StatisticBoot
    from attrib_audit.audit.sensitivity import SensitivitySection
    from attrib_audit.audit.spec import RunSpec
    from attrib_audit.audit.transfer import TransferSection


@dataclass(frozen=True)
class ToolInfo:
    """Which attrib-audit wrote a file, on which Python and platform."""

    name: str
    version: str
    python: str
    platform: str


def tool_info() -> ToolInfo:
    """This attrib-audit, Python and platform."""
    return ToolInfo(name="attrib-audit", version=__version__, python=sys.version.split()[0],
                    platform=platform.platform())


SKIP = {"skip_default": True}  # a key written only when it holds a value (absent in the rows that lack it)


@dataclass(frozen=True)
class HandedSource:
    """A precomputed metric handed to `run_audit` as values, not a file or column a rerun could read again."""

    name: str
    source: str  # where its values say they came from ("python" unless a Precomputed names a file)


@dataclass(frozen=True, kw_only=True)
class ConfigRecord:
    """How the audit ran (machine-local settings included; `spec` is what reruns it)."""

    scorers: list[str]
    slice_by: str
    n_boot: int
    statistic: str = "auroc"  # the transfer statistic: auroc, or a correlation with the graded rating
    seed: int
    ci: str
    level: float
    chance_test: str | None = field(default=None, metadata=SKIP)  # how `beats_chance` in the AUROC rows was decided
    device: str
    n_perm: int
    window_sensitivity: int | None = None
    scorer_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    batch_size: int | None = None
    engine: str = "local"
    cache: str | None = None
    on_error: str = "fail"
    # name -> where its scores came from: a file or column (ScoreSource), or values handed over (HandedSource)
    precomputed: dict[str, ScoreSource | HandedSource] = field(default_factory=dict)


def _check_range(record: object, names: tuple[str, ...], low: float, high: float) -> None:
    """Refuse a finite value of `names` outside [low, high] (None and NaN mean "undefined" and pass): a read-back
    file holding an AUROC of 7.5 or a count of −5 is refused in one line instead of drawn or divided by."""
    for name in names:
        value = getattr(record, name)
        if isinstance(value, (int, float)) and math.isfinite(value) and not low <= value <= high:
            raise ValueError(f"{name} = {value:g} is outside [{low:g}, {high:g}]")


COUNT = (0.0, math.inf)


@dataclass(frozen=True, kw_only=True)
class SliceRow:
    """One slice of the audit: its size, classes, clusters and construct."""

    slice: str
    n: int
    n_pos: int
    n_groups: int
    construct: str  # a construct, "unspecified", or "mixed:a+b"
    status: str  # ok | one_class | no_label
    weighting: str | None = field(default=None, metadata=SKIP)  # a weighted (sampled) file: Horvitz–Thompson
    pool_size: float | None = field(default=None, metadata=SKIP)  # with weighting: Σ 1/inclusion_prob

    def __post_init__(self) -> None:
        _check_range(self, ("n", "n_pos", "n_groups"), *COUNT)


@dataclass(frozen=True, kw_only=True)
class ChanceTest:
    """Whether one AUROC beats chance on its slice (stats.chance), written into its row."""

    p_chance: float | None  # one-sided p of AUROC > 0.5 on this slice
    p_chance_holm: float | None = None  # Holm-adjusted over the slices of this scorer's construct
    beats_chance: bool = False


@dataclass(frozen=True, kw_only=True)
class AurocRow:
    """One scorer's AUROC [CI] on one slice; `note` says why there is none, `chance` whether it beats 0.5."""

    scorer: str
    slice: str
    auroc: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    n_pos: int
    n_groups: int
    note: str | None = field(default=None, metadata=SKIP)  # why there is no AUROC (one class, no label)
    n_failed: int | None = field(default=None, metadata=SKIP)
    n_boot: int | None = field(default=None, metadata=SKIP)
    n_boot_dropped: int | None = field(default=None, metadata=SKIP)
    chance: ChanceTest | None = field(default=None, metadata={"inline": True, "skip_default": True})

    def __post_init__(self) -> None:
        _check_range(self, ("auroc", "ci_low", "ci_high"), 0.0, 1.0)
        _check_range(self, ("n", "n_pos", "n_groups", "n_failed", "n_boot", "n_boot_dropped"), *COUNT)

    @property
    def beats_chance(self) -> bool:
        """Whether the chance test (when there is one) rejects AUROC ≤ 0.5."""
        return bool(self.chance and self.chance.beats_chance)


@dataclass(frozen=True, kw_only=True)
class PairedRow:
    """AUROC(scorer_a) − AUROC(scorer_b) on one slice, from shared resamples."""

    scorer_a: str
    scorer_b: str
    slice: str
    diff: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    n_dropped: dict[str, int]
    n_boot_dropped: int
    excludes_zero: bool

    def __post_init__(self) -> None:
        _check_range(self, ("diff", "ci_low", "ci_high"), -1.0, 1.0)
        _check_range(self, ("n", "n_boot_dropped"), *COUNT)


@dataclass(frozen=True, kw_only=True)
class TruncationRow:
    """How much of one slice's evidence one scorer cut off."""

    scorer: str
    slice: str
    n: int
    pairs_truncated: int
    tokens_truncated: int
    input_tokens: int
    share_tokens_cut: float | None
    mean_chunks: float


@dataclass(frozen=True, kw_only=True)
class FailureRow:
    """The pairs one scorer failed on one slice, with up to three reasons."""

    scorer: str
    slice: str
    n: int
    n_failed: int
    n_clamped: int = 0  # judge answers outside [0, 1], clamped
    examples: list[str] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class TransferredThreshold:
    """A metric's pass threshold for one slice, chosen on the OTHER slices of the audit (audit.systems), or None and
    why: no other slice, or the other slices' scored rows hold one class."""

    threshold: float | None
    from_slices: list[str] | None = field(default=None, metadata={"json": "from", "skip_default": True})
    n_train: int | None = field(default=None, metadata={"skip_default": True})  # the finite rows it was chosen on
    train_balanced_accuracy: float | None = field(default=None, metadata={"skip_default": True})
    reason: str | None = field(default=None, metadata={"skip_default": True})  # why there is no threshold


@dataclass(frozen=True, kw_only=True)
class ItemVsSystem:
    """One metric's item-level AUROC [CI] beside its system-level τ-b [CI] (mean score), and a note where the two
    levels disagree (`item`, `system`: above / holds / below the null, or undefined)."""

    metric: str
    auroc: float | None
    auroc_ci_low: float | None
    auroc_ci_high: float | None
    tau: Estimate
    pairwise_accuracy: Estimate
    item: str
    system: str
    disagree: bool
    note: str | None


@dataclass(frozen=True, kw_only=True)
class SystemsSlice:
    """One slice of the system-level section (audit.systems.slice_section): its statistics (stats.systems.SystemLevel,
    written inline) when status is ok, else why the slice is skipped."""

    slice: str
    n_rows: int  # rows that name a system
    n_without_system: int
    n_systems: int
    thresholds: dict[str, TransferredThreshold]  # metric -> threshold chosen on the other slices (or None and why)
    status: str  # ok | skipped
    reason: str | None = field(default=None, metadata={"skip_default": True})  # why a slice is skipped
    statistics: SystemLevel | None = field(default=None, metadata={"inline": True, "skip_default": True})
    # AUROC [CI] beside τ-b [CI] per metric, with a note where they disagree
    item_vs_system: list[ItemVsSystem] | None = field(default=None, metadata={"skip_default": True})
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class SystemsBlock:
    """audit.systems.systems_section: the settings it ran with, then one entry per slice that names systems."""

    level: float
    n_boot: int
    seed: int
    resample: list[str]  # inputs, or inputs and systems
    min_shared: int
    threshold_rule: str
    estimand: str
    pairwise_accuracy: str
    slices: list[SystemsSlice]


@dataclass(frozen=True, kw_only=True)
class AuditResults:
    """results.json, its keys in the order of these fields (the file adds `digest` last); keys of earlier versions'
    files that are absent read as the defaults."""

    run_id: str  # stamped on every file of the run (scores.parquet, bootstrap.npz, derived files)
    tool: ToolInfo
    config: ConfigRecord
    data: list[DataEntry]  # one entry per input, by kind of source (data.origin): a file, an adapter, a HF split
    skipped: list[SkippedRow] = field(default_factory=list)  # rows skipped with --on-error skip, and why
    scorers: list[RunStats]  # each scorer's signature and how many pairs it scored or found cached
    unavailable: list[Unavailable] = field(default_factory=list)  # scorers that could not run here
    precomputed: list[PrecomputedRecord] = field(default_factory=list)  # scores computed elsewhere
    slices: list[SliceRow]
    auroc: list[AurocRow]
    paired: list[PairedRow] = field(default_factory=list)
    truncation: list[TruncationRow] = field(default_factory=list)
    failures: list[FailureRow] = field(default_factory=list)
    transfer: TransferSection | None = None  # audit.transfer: does metric quality carry across datasets
    sensitivity: SensitivitySection | None = None  # audit.sensitivity: window, chunking, length, single datasets
    systems: SystemsBlock | None = field(default=None, metadata=SKIP)  # only when rows name their system
    correlations: CorrelationSection | None = field(default=None, metadata=SKIP)  # only with a graded rating
    cut_sensitivity: CutSensitivity | None = field(default=None, metadata=SKIP)  # only with a label cut from it
    elapsed_s: float = math.nan  # seconds the audit took
    # the run spec, data resolved: what `audit --check` runs again, so read strictly (an unknown key is refused)
    spec: RunSpec | None = field(default=None, metadata={**SKIP, "strict": True})
    command: list[str] | None = field(default=None, metadata=SKIP)  # the command line that reruns it (cli.rerun)

    @property
    def scorer_names(self) -> list[str]:
        """The scorers audited, in order (precomputed metrics included)."""
        return [s.scorer for s in self.scorers]


def to_json(results: AuditResults) -> str:
    """results.json's text: plain values, indented, sealed with a digest of the content."""
    return sealed_json(to_record(results))


def results_path(folder: str | Path, command: str) -> Path:
    """DIR/results.json of an earlier audit, or one line (naming `command`) saying why there is none."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(f"{command}: {folder} is not a folder" + (" (it is a file)" if folder.exists() else
                                                                   " (no such folder)")
                         + f"; give the folder of `attrib-audit audit --out {folder}`")
    path = folder / "results.json"
    if not path.is_file():
        raise InputError(f"{command}: {path} not found; run `attrib-audit audit ... --out {folder}` first")
    return path


def results_file(folder: str | Path, command: str = "read_results",
                 error: type[InputError] = InputError) -> tuple[Path, SavedDict]:
    """FOLDER/results.json as parsed, unchecked JSON and its path (to see whether its digest holds)."""
    path = results_path(folder, command)
    return path, read_json(path, error)


@dataclass(frozen=True)
class SliceBoot:
    """The bootstrap of one slice, kept in memory for paired and transfer statistics."""

    scorers: list[str]
    boot: BootstrapAUROC
    rows: np.ndarray
    groups: list[str]


@dataclass(frozen=True, kw_only=True)
class AuditResult:
    """What `run_audit` returns: the results (results.json) and what they were computed from."""

    results: AuditResults
    scores: dict[str, ScoreBatch]
    boots: dict[str, SliceBoot]
    table: PairTable
    slice_keys: list[str]
    graded: dict[str, StatisticBoot] = field(default_factory=dict)  # `--statistic` a correlation: per slice

    def save(self, out: str | Path) -> Path:
        """Write results.json, scores.parquet and bootstrap.npz (what `select` needs to replay the bootstrap),
        all stamped with the run id, into a staged folder that replaces `out` as a whole."""
        run_id = self.results.run_id
        with staged_dir(out, replaces=RUN_ARTEFACTS) as tmp:
            (tmp / "results.json").write_text(to_json(self.results))
            write_scores_parquet(tmp / "scores.parquet", self.table, self.slice_keys, self.scores, run_id=run_id)
            write_bootstrap_npz(tmp / "bootstrap.npz", self.boots, run_id=run_id, graded=self.graded,
                                scorers=list(self.scores))
        return Path(out) / "results.json"


def graded_arrays(graded: Mapping[str, StatisticBoot], scorers: list[str]) -> dict[str, np.ndarray]:
    """The inputs of each slice's correlation bootstrap (`--statistic`), so `select` recomputes its draws: they
    depend on the seed and the slice name only."""
    names = sorted(graded)
    if not names:
        return {}
    first = graded[names[0]]
    return {
        "graded_statistic": np.array(first.statistic), "graded_seed": np.array(first.seed),
        "graded_n_boot": np.array(first.n_boot), "graded_slices": np.array(names, dtype=str),
        "graded_scorers": np.array(scorers, dtype=str),
        "graded_row_slice": np.concatenate([np.full(graded[s].n_rows, i) for i, s in enumerate(names)]),
        "graded_rating": np.concatenate([graded[s].rating for s in names]),
        "graded_items": np.concatenate([graded[s].items for s in names]).astype(str),
        "graded_systems": np.concatenate([graded[s].systems if graded[s].systems is not None
                                          else np.full(graded[s].n_rows, "") for s in names]).astype(str),
        "graded_named": np.array([graded[s].systems is not None for s in names], dtype=bool),
        "graded_scores": np.concatenate([graded[s].scores for s in names], axis=1),
    }


def write_bootstrap_npz(path: Path, boots: dict[str, SliceBoot], run_id: str = "",
                        graded: Mapping[str, StatisticBoot] | None = None, scorers: list[str] | None = None) -> None:
    """Each bootstrapped slice's inputs and generator state, so `select` replays the audit's exact draws
    on the rows its candidate metrics have in common (all slices share the scorers and B); with `graded` (the
    transfer statistic is a correlation with the rating) the inputs of those bootstraps too."""
    names = sorted(boots)
    first = boots[names[0]] if names else None
    np.savez_compressed(
        path, run_id=np.array(run_id), slices=np.array(names, dtype=str),
        scorers=np.array(first.scorers if first else [], dtype=str),
        n_boot=first.boot.n_boot if first else 0,
        rng_states=np.array([json.dumps(boots[s].boot.rng_state) for s in names], dtype=str),
        row_slice=np.concatenate([np.full(boots[s].rows.size, i) for i, s in enumerate(names)]
                                 or [np.zeros(0)]).astype(np.int64),
        labels=np.concatenate([boots[s].boot.labels for s in names] or [np.zeros(0)]).astype(np.int64),
        weights=np.concatenate([np.ones(boots[s].rows.size) if boots[s].boot.weights is None else boots[s].boot.weights
                                for s in names] or [np.zeros(0)]),
        weighted=np.array([boots[s].boot.weights is not None for s in names], dtype=bool),
        groups=np.array([g for s in names for g in boots[s].groups], dtype=str),
        scores=np.concatenate([boots[s].boot.scores for s in names], axis=1) if names else np.zeros((0, 0)),
        # numpy's stub lets a ** mapping fill allow_pickle (bool): the graded arrays are named graded_*
        **graded_arrays(graded or {}, scorers or []))  # type: ignore[arg-type]


def scores_columns(table: PairTable, slice_keys: list[str], scores: dict[str, ScoreBatch]) -> dict[str, Any]:
    """The columns of scores.parquet, in order: each pair's fields, slice and label, then each scorer's score,
    truncation, chunks, failure and extras."""
    columns = {"id": table.ids, "dataset": table.datasets, "source": table.sources, "group": table.groups,
               "construct": table.constructs, "system": table.systems, "slice": slice_keys,
               "label": table.labels.astype(np.int64)}
    if table.weights is not None:  # a sampled file's 1/π, so `plan --results` describes the pool
        columns["weight"] = table.weights
    for name, batch in scores.items():
        columns[name] = batch.scores
        columns[f"{name}__truncated_tokens"] = batch.truncated_tokens
        columns[f"{name}__chunks"] = batch.chunks
        columns[f"{name}__failure"] = batch.failures
        for key, values in sorted(batch.extras.items()):  # e.g. a judge's label and raw answer
            columns[f"{name}__{key}"] = values
    return columns


def write_scores_parquet(path: Path, table: PairTable, slice_keys: list[str], scores: dict[str, ScoreBatch],
                         run_id: str = "") -> None:
    """scores.parquet: one row per pair, the `scores_columns`. Built with pyarrow column by column (a pandas
    DataFrame cost most of the save on 100k rows); each column has the arrow type the DataFrame gave it, so the
    file reads back the same."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    columns = scores_columns(table, slice_keys, scores)
    arrow = pa.table({k: _arrow_column(pa, v) for k, v in columns.items()})
    pq.write_table(arrow.replace_schema_metadata({PARQUET_RUN_KEY: run_id.encode()}), path)


def _arrow_column(pa: Any, values: Any) -> Any:
    """The arrow array a pandas column of `values` becomes: NaN and None are nulls, text is large_string (pandas' str
    dtype), and whole numbers with a gap are doubles (pandas holds the gap as NaN). Numbers in a numpy array and
    text-or-None lists (every column but a judge's extras) are laid into arrow buffers directly: pa.array imports
    pandas to inspect its input, a slow import this path avoids."""
    direct = _buffers_column(pa, values)
    if direct is not None:
        return direct
    arr = pa.array(values, from_pandas=True)
    if pa.types.is_string(arr.type):
        return arr.cast(pa.large_string())
    if pa.types.is_integer(arr.type) and arr.null_count:
        return arr.cast(pa.float64())
    return arr


def _validity(pa: Any, present: np.ndarray) -> tuple[Any, int]:
    """(arrow validity bitmap or None, null count) of a mask of present values."""
    nulls = int(present.size - np.count_nonzero(present))
    return (pa.py_buffer(np.packbits(present, bitorder="little")) if nulls else None), nulls


def _buffers_column(pa: Any, values: Any) -> Any:
    """`values` as an arrow array built from its buffers, or None for any other kind of column."""
    if isinstance(values, np.ndarray) and values.ndim == 1 and values.dtype.kind in "fiub":
        v = np.ascontiguousarray(values)
        if v.dtype.kind == "b":
            return pa.Array.from_buffers(pa.bool_(), v.size, [None, pa.py_buffer(np.packbits(v, bitorder="little"))])
        mask, nulls = _validity(pa, ~np.isnan(v)) if v.dtype.kind == "f" else (None, 0)
        return pa.Array.from_buffers(pa.from_numpy_dtype(v.dtype), v.size, [mask, pa.py_buffer(v)], null_count=nulls)
    if not isinstance(values, list) or not all(x is None or type(x) is str for x in values):
        return None
    if all(x is None for x in values):
        return pa.nulls(len(values))
    try:
        encoded = [b"" if x is None else x.encode("utf-8") for x in values]
    except UnicodeEncodeError:
        return None  # a lone surrogate: pa.array says what it says of one
    offsets = np.zeros(len(values) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)), out=offsets[1:])
    mask, nulls = _validity(pa, np.fromiter((x is not None for x in values), dtype=bool, count=len(values)))
    return pa.Array.from_buffers(pa.large_string(), len(values),
                                 [mask, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))], null_count=nulls)
