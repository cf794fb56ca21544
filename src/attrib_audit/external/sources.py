"""Where precomputed scores come from (`--score-col`, `--scores`), as plain data, and how they meet the pairs.

A ScoreSource is JSON-friendly (files.records.to_record) so a recorded run can name its sources and
resolve them again. Resolution joins each source to the loaded pairs; ids on one side only are
reported, and with on_error="fail" the first one is an error that names it.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from attrib_audit.data.errors import DataError
from attrib_audit.data.loaders import iter_rows, row_id
from attrib_audit.data.origin import PairsFile
from attrib_audit.data.records import PairTable
from attrib_audit.data.sources import need
from attrib_audit.external.exports import ScoreFile, keys_for, numeric_columns, read_score_file, text_key
from attrib_audit.external.precomputed import PYTHON_SOURCE, Precomputed, from_values, join_scores
from attrib_audit.files.hashing import file_sha256

LOWER = "lower"


@dataclass(frozen=True, kw_only=True)
class ScoreSource:
    """One precomputed scorer: `column` of `file` (None: of the audited data files), named `name`."""

    name: str
    column: str
    file: str | None = None
    format: str = "auto"  # for files: auto, table, ragas, deepeval, trulens
    lower: bool = False  # lower values mean better supported (e.g. a hallucination probability)

    def __post_init__(self) -> None:
        for name in ("name", "column", "file", "format"):  # a run spec file may hold anything
            value = getattr(self, name)
            need((isinstance(value, str) and bool(value)) or (name == "file" and value is None), f"precomputed.{name}",
                 f"expected a{' file path' if name == 'file' else ' string'}", value)
        need(isinstance(self.lower, bool), "precomputed.lower", "expected true or false", self.lower)



def _entry(text: str, what: str) -> tuple[str, str, bool]:
    """`NAME=COL[:lower]` or `COL[:lower]` → (name, column, lower)."""
    body, lower = text.strip(), False
    if body.lower().endswith(":" + LOWER):
        body, lower = body[: -len(LOWER) - 1], True
    name, sep, col = body.partition("=")
    name, col = (name.strip(), col.strip()) if sep else (body.strip(), body.strip())
    if not name or not col or ":" in name:
        raise DataError(f"{what} {text!r} must be NAME=COLUMN, optionally ending in :lower")
    return name, col, lower


def parse_score_col(text: str) -> ScoreSource:
    """`--score-col NAME=COL[:lower]`: a numeric column of the data file(s)."""
    name, col, lower = _entry(text, "--score-col")
    return ScoreSource(name=name, column=col, lower=lower)


def split_file_arg(text: str) -> tuple[str, str | None]:
    """`FILE[:COLS]`: the longest prefix that is a file wins, so paths may hold ':'."""
    if Path(text).exists():
        return text, None
    cuts = [i for i, ch in enumerate(text) if ch == ":"]
    for i in reversed(cuts):
        if Path(text[:i]).is_file():
            return text[:i], text[i + 1:]
    raise DataError("file not found", path=text.split(":", 1)[0] if cuts else text)


# columns of our pairs schema that are numeric but never a metric's output
NOT_SCORES = frozenset({"label", "gold", "gold_label", "human_label", "inclusion_prob"})


def parse_scores_arg(text: str, fmt: str = "auto", log: Callable[[str], None] = lambda _m: None,
                     ) -> tuple[list[ScoreSource], ScoreFile]:
    """`--scores FILE[:COL1,NAME=COL2:lower]`: the chosen columns, or else every numeric one."""
    path, selection = split_file_arg(text)
    sf = read_score_file(path, fmt, log)
    if selection:
        picked = [_entry(part, "--scores column") for part in selection.split(",") if part.strip()]
        absent = [c for _, c, _ in picked if c not in sf.columns]
        if absent:
            raise DataError(f"no score column {absent[0]!r} (have: {', '.join(sf.columns) or 'none'})", path=path,
                            field=absent[0])
    else:
        keep, other = numeric_columns(sf)
        gold = [c for c in keep if str(c).strip().lower() in NOT_SCORES]
        keep = [c for c in keep if c not in gold]
        if gold:  # a 0/1 gold label is numeric, and audited as a metric it scores AUROC 1.000
            log(f"scores: {path}: {', '.join(map(str, gold))} left out: the gold label/sampling column is not a "
                f"metric (name it, FILE:{gold[0]}, to audit it anyway)")
        if not keep:
            raise DataError(f"no numeric score column (have: {', '.join(sf.columns) or 'none'})", path=path)
        picked = [(c, c, False) for c in keep]
        if other:
            log(f"scores: {path}: not numeric, left out: {', '.join(map(str, other))}")
    return [ScoreSource(name=n, column=c, file=path, format=sf.format, lower=low) for n, c, low in picked], sf


def data_columns(table: PairTable, columns: Sequence[str]) -> ScoreFile:
    """Columns of the data files the pairs came from, keyed by pair id (the loader's id rule), read once."""
    ids: list[str | None] = []
    cells: dict[str, list[Any]] = {c: [] for c in columns}
    names = []
    for o in table.origin:
        path = o.path
        load = o.load if isinstance(o, PairsFile) and o.format in (None, "pairs") else None
        if load is None or not Path(path).is_file():
            raise DataError("--score-col reads columns of files in our pair schema; for this input give the "
                            "scores as a file with --scores", path=path)
        id_col = load.columns.get("id", "id")
        default = load.dataset or Path(path).stem
        first = True
        for row, rec in iter_rows(path, skipped=[]):
            absent = [c for c in columns if c not in rec] if first else []
            if absent:
                raise DataError(f"no column {absent[0]!r} (have: {', '.join(map(str, rec))})", path=path,
                                field=absent[0])
            first = False
            ids.append(row_id(rec, id_col, default, row))
            for c in columns:
                cells[c].append(rec.get(c))
        names.append(Path(path).name)
    return ScoreFile(path=",".join(names), format="data", ids=ids, claims=None, evidences=None, columns=cells)


def resolve_one(table: PairTable, src: ScoreSource, *, files: dict[str | None, ScoreFile] | None = None,
                log: Callable[[str], None] = lambda _m: None) -> Precomputed:
    """Join one source to the pairs; `files` caches what was read (path → ScoreFile; None: the data columns)."""
    files = {} if files is None else files
    if src.file is None:
        sf = files.get(None)
        if sf is None or src.column not in sf.columns:
            sf = data_columns(table, [src.column])
        return join_scores(src.name, table.ids, table.ids, [str(i) for i in sf.ids], sf.columns[src.column],
                           source=sf.path, column=src.column, join="id", lower_is_better=src.lower)
    sf = files.get(src.file) or read_score_file(src.file, src.format, log)
    files[src.file] = sf
    if src.column not in sf.columns:
        raise DataError(f"no score column {src.column!r} (have: {', '.join(sf.columns) or 'none'})", path=src.file,
                        field=src.column)
    join, keys = keys_for(sf, table.ids)
    pair_keys = table.ids if join == "id" else _pair_text_keys(table, sf)
    labels = None if join == "id" else [i or f"row {j + 1}" for j, i in enumerate(sf.ids)]
    p = join_scores(src.name, pair_keys, table.ids, keys, sf.columns[src.column], source=src.file,
                    column=src.column, join=join, lower_is_better=src.lower, reasons=sf.reasons.get(src.column),
                    labels=labels)
    p.sha256 = file_sha256(src.file)
    return p


def precomputed_scores(table: PairTable, given: Mapping[str, Any], *, on_error: str = "fail",
                       log: Callable[[str], None] = lambda _m: None) -> dict[str, Precomputed]:
    """`AuditConfig.precomputed` → one Precomputed per name, aligned with the table's rows.

    Each value is a ScoreSource (what the CLI records), a Precomputed, a mapping id → score (joined on
    id), or scores in table order (numpy array, list, pandas Series, pyarrow array).
    """
    out: dict[str, Precomputed] = {}
    columns = [v.column for v in given.values() if isinstance(v, ScoreSource) and v.file is None]
    files: dict[str | None, ScoreFile] = {None: data_columns(table, columns)} if columns else {}
    for name, value in given.items():
        if isinstance(value, ScoreSource):
            p = resolve_one(table, value, files=files, log=log)
        elif isinstance(value, Precomputed):
            p = value
        elif isinstance(value, Mapping):
            p = join_scores(name, table.ids, table.ids, [str(k) for k in value], list(value.values()),
                            source=PYTHON_SOURCE, column=name, join="id")
        else:
            p = from_values(name, value, len(table))
        if p.values.size != len(table):
            raise ValueError(f"precomputed {name!r} holds {p.values.size} scores for {len(table)} pairs")
        p.name = name
        _report(p, on_error, log)
        out[name] = p
    return out


def _pair_text_keys(table: PairTable, sf: ScoreFile) -> list[str]:
    if sf.evidences is None:
        return [text_key(c) for c in table.claims]
    return [text_key(c, e) for c, e in zip(table.claims, table.evidences)]


def _report(p: Precomputed, on_error: str, log: Callable[[str], None]) -> None:
    """Ids on one side of the join only: an error naming the first under on_error='fail', else a note."""
    n_fail = sum(f is not None for f in p.failures)
    if on_error == "fail" and p.missing_ids:
        raise DataError(f"precomputed scorer {p.name!r}: pair id {p.missing_ids[0]!r} has no score "
                        f"({len(p.missing_ids)} pairs without one; --on-error skip audits the rest and lists them)",
                        path=p.source, field=p.column)
    if on_error == "fail" and p.unmatched_ids:
        raise DataError(f"precomputed scorer {p.name!r}: {'id' if p.join == 'id' else 'score row'} "
                        f"{p.unmatched_ids[0][:80]!r} matches no pair ({len(p.unmatched_ids)} such rows; "
                        f"--on-error skip leaves them out and counts them)", path=p.source, field=p.column)
    if n_fail or p.unmatched_ids:
        log(f"note: {p.name}: {n_fail} of {p.values.size} pairs without a usable score "
            f"({len(p.missing_ids)} not in {Path(p.source).name}); {len(p.unmatched_ids)} score rows match no pair")
