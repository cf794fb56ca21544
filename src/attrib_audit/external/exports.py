"""Score files: our own (`id` + score columns) and the export files of popular evaluators.

Each reader turns a file into a ScoreFile: per row an id (if the file has one), the text it scored
(response/output and, where exported, the retrieved contexts) and raw score cells. Only the files
are read; the evaluators' libraries are never imported. The fields each format reads:

- table:    `id` + numeric columns (what `attrib-audit score` writes; `NAME__failure` gives NaN's reason).
- ragas:    rows of `EvaluationResult.to_pandas()` saved as CSV/JSON/JSONL/Parquet: `response` (or v0.1
            `answer`), `retrieved_contexts` (or `contexts`; a list, or its printed form in CSV), an optional
            `id`, and the metric columns (e.g. `faithfulness`).
- deepeval: a test-run JSON (`testCases` at the top or one level down): per case `name`,
            `actualOutput`, `retrievalContext` (else `context`) and `metricsData[].{name, score, error}`;
            each metric becomes a column named like `faithfulness` / `answer_relevancy`.
- trulens:  `get_records_and_feedback()`'s frame saved as CSV/JSON/Parquet: `record_id`, `output` and one
            column per feedback function (e.g. `Groundedness`); `*_calls`, cost, latency and token
            columns are bookkeeping and never scores. It holds no contexts, so a text join uses `output`
            alone (JSON-quoted outputs are unquoted).
"""
from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from attrib_audit.data.errors import DataError
from attrib_audit.data.loaders import iter_rows
from attrib_audit.external.precomputed import to_score
from attrib_audit.text.cells import cell_text, missing

SCORE_FORMATS = ("auto", "table", "ragas", "deepeval", "trulens")
_RAGAS_TEXT = {"user_input", "question", "response", "answer", "retrieved_contexts", "contexts", "reference",
               "ground_truth", "ground_truths", "reference_contexts", "multi_responses", "rubrics", "id"}
_TRULENS_BOOKKEEPING = {"app_id", "app_name", "app_version", "app_json", "type", "record_id", "input", "output",
                        "tags", "record_json", "cost_json", "perf_json", "ts", "latency", "total_tokens",
                        "total_cost", "num_events"}


@dataclass(kw_only=True)
class ScoreFile:
    """A score source read into columns; `claims`/`evidences` are None where the format has no such text."""

    path: str
    format: str
    ids: list[str | None]
    claims: list[str | None] | None
    evidences: list[str | None] | None
    columns: dict[str, list[Any]]  # candidate score columns, raw cells
    reasons: dict[str, list[str | None]] = field(default_factory=dict)  # the tool's own reason a cell is empty
    ignored: list[str] = field(default_factory=list)  # columns that are never scores (text, bookkeeping)

    def __len__(self) -> int:
        return len(self.ids)


def _parse_list(text: str, *, path: str, row: int, field_: str) -> Any:
    """JSON, else a Python literal (how pandas prints a list into CSV); `literal_eval` never runs code."""
    for parse in (json.loads, ast.literal_eval):
        try:
            return parse(text)
        except (ValueError, SyntaxError, RecursionError, MemoryError):  # absurd nesting is bad input too
            continue
    raise DataError("contexts look like a list but do not parse", path=path, row=row, field=field_)


def _contexts(v: Any, *, path: str, row: int, field_: str) -> str | None:
    """Retrieved contexts as one text: a list, or the list as pandas prints it into a CSV cell."""
    if missing(v):
        return None
    if isinstance(v, str):
        s = v.strip()
        if s.startswith("["):
            v = _parse_list(s, path=path, row=row, field_=field_)
        else:
            return s
    if hasattr(v, "tolist"):
        v = v.tolist()
    if isinstance(v, (list, tuple)):
        return " ".join(str(c) for c in v)
    raise DataError(f"contexts must be a list of texts, got {type(v).__name__}", path=path, row=row, field=field_)


def _unquote(text: str | None) -> str | None:
    """TruLens stores a record's output JSON-encoded ('"Paris."'); the text scored is what is inside."""
    if text and len(text) >= 2 and text[0] == text[-1] == '"':
        try:
            inner = json.loads(text)
        except ValueError:
            return text
        return inner if isinstance(inner, str) else text
    return text


def _rows(path: Path) -> list[dict]:
    """Rows of a CSV/JSONL/Parquet file, or of a JSON array file (pandas `to_json(orient='records')`)."""
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:  # JSON lines under a .json name (pandas `to_json(lines=True)`)
            return [r for _, r in iter_rows(path)]
        except RecursionError:
            raise DataError("JSON nested too deeply", path=str(path)) from None
        if isinstance(data, list):
            if not all(isinstance(r, dict) for r in data):
                raise DataError("a JSON array of scores must hold objects", path=str(path))
            return data
        if isinstance(data, dict) and all(isinstance(v, dict) for v in data.values()):  # orient='columns'
            keys = list(next(iter(data.values()), {}))
            return [{c: data[c].get(k) for c in data} for k in keys]
        raise DataError("expected a JSON array of row objects", path=str(path))
    return [r for _, r in iter_rows(path)]


def _json(path: Path) -> Any:
    if not path.exists():
        raise DataError("file not found", path=str(path))
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        raise DataError(f"invalid JSON ({str(exc).splitlines()[0]})", path=str(path)) from None


def _deepeval_cases(data: Any) -> list | None:
    if isinstance(data, dict):
        if isinstance(data.get("testCases"), list):
            return data["testCases"]
        for v in data.values():
            if isinstance(v, dict) and isinstance(v.get("testCases"), list):
                return v["testCases"]
    return None


def detect_score_format(path: Path) -> str:
    """The format of a score file, from its fields (cheap: one JSON parse or the first row)."""
    if path.suffix.lower() == ".json" and path.exists():
        data = _json(path)
        if _deepeval_cases(data) is not None:
            return "deepeval"
        first = data[0] if isinstance(data, list) and data else {}
        cols = set(first) if isinstance(first, dict) else set()
    else:
        cols = set(next(iter(iter_rows(path)), (0, {}))[1])
    if "record_id" in cols and "output" in cols:
        return "trulens"
    if ({"response", "retrieved_contexts"} <= cols) or ({"answer", "contexts"} <= cols):
        return "ragas"
    if "id" in cols:
        return "table"
    raise DataError("cannot tell the score file's format: expected an `id` column (our score files), RAGAS "
                    "(`response` + `retrieved_contexts`), DeepEval (`testCases`) or TruLens (`record_id` + `output`); "
                    "set --scores-format", path=str(path))


def slug(name: str) -> str:
    """A metric's display name as a scorer name: 'Answer Relevancy' → 'answer_relevancy'."""
    return re.sub(r"[^0-9a-z]+", "_", name.strip().lower()).strip("_") or "metric"


def read_table(path: Path) -> ScoreFile:
    rows = _rows(path)
    if not rows or "id" not in rows[0]:
        raise DataError("a score file needs an `id` column matching the pairs' ids", path=str(path), field="id")
    names = [c for c in rows[0] if c != "id" and "__" not in str(c)]
    cols = {c: [r.get(c) for r in rows] for c in names}
    reasons = {c: [cell_text(r.get(f"{c}__failure")) for r in rows] for c in names if f"{c}__failure" in rows[0]}
    return ScoreFile(path=str(path), format="table", ids=[cell_text(r.get("id")) for r in rows], claims=None,
                     evidences=None, columns=cols, reasons=reasons, ignored=[c for c in rows[0] if "__" in str(c)])


def read_ragas(path: Path) -> ScoreFile:
    rows = _rows(path)
    if not rows:
        raise DataError("no rows", path=str(path))
    head = rows[0]
    claim = "response" if "response" in head else "answer"
    ctx = "retrieved_contexts" if "retrieved_contexts" in head else "contexts"
    if claim not in head or ctx not in head:
        raise DataError(f"a RAGAS result needs `response` and `retrieved_contexts` (v0.1: `answer`, `contexts`); "
                        f"have: {', '.join(map(str, head))}", path=str(path))
    claims = [cell_text(r.get(claim)) for r in rows]
    evid = [_contexts(r.get(ctx), path=str(path), row=i + 1, field_=ctx) for i, r in enumerate(rows)]
    names = [c for c in head if c not in _RAGAS_TEXT]
    ids: list[str | None] = [cell_text(r.get("id")) for r in rows] if "id" in head else [None] * len(rows)
    return ScoreFile(path=str(path), format="ragas", ids=ids, claims=claims, evidences=evid,
                     columns={c: [r.get(c) for r in rows] for c in names},
                     ignored=[c for c in head if c in _RAGAS_TEXT])


def read_deepeval(path: Path) -> ScoreFile:
    cases = _deepeval_cases(_json(path))
    if cases is None:
        raise DataError("a DeepEval test run needs a `testCases` list", path=str(path))
    ids, claims, evid = [], [], []
    cols: dict[str, list[Any]] = {}
    reasons: dict[str, list[str | None]] = {}
    for i, case in enumerate(cases):
        if not isinstance(case, dict):
            raise DataError("each test case must be an object", path=str(path), row=i + 1)
        ids.append(cell_text(case.get("name")))
        claims.append(cell_text(case.get("actualOutput")))
        ctx_field = "retrievalContext" if case.get("retrievalContext") else "context"
        evid.append(_contexts(case.get(ctx_field), path=str(path), row=i + 1, field_=ctx_field))
        for m in case.get("metricsData") or []:
            if not isinstance(m, dict):
                raise DataError("each metricsData entry must be an object", path=str(path), row=i + 1)
            col = slug(str(m.get("name", "metric")))
            cols.setdefault(col, [None] * i)
            reasons.setdefault(col, ["metric not in this test case"] * i)
            if len(cols[col]) > i:
                raise DataError(f"metric {m.get('name')!r} appears twice in one test case", path=str(path),
                                row=i + 1, field="metricsData")
            cols[col].append(m.get("score"))
            reasons[col].append(f"deepeval error: {str(m['error'])[:80]}" if m.get("error") else None)
        for col in cols:  # metrics this case lacks
            if len(cols[col]) <= i:
                cols[col].append(None)
                reasons[col].append("metric not in this test case")
    return ScoreFile(path=str(path), format="deepeval", ids=ids, claims=claims, evidences=evid, columns=cols,
                     reasons=reasons)


def read_trulens(path: Path) -> ScoreFile:
    rows = _rows(path)
    if not rows or "output" not in rows[0]:
        raise DataError("a TruLens records file needs `record_id` and `output`", path=str(path))
    head = list(rows[0])

    def bookkeeping(c: str) -> bool:
        low = str(c).lower()
        return c in _TRULENS_BOOKKEEPING or low.endswith("_calls") or "cost" in low or low.endswith("direction")

    names = [c for c in head if not bookkeeping(c)]
    return ScoreFile(path=str(path), format="trulens", ids=[cell_text(r.get("record_id")) for r in rows],
                     claims=[_unquote(cell_text(r.get("output"))) for r in rows], evidences=None,
                     columns={c: [r.get(c) for r in rows] for c in names},
                     ignored=[c for c in head if bookkeeping(c)])


READERS = {"table": read_table, "ragas": read_ragas, "deepeval": read_deepeval, "trulens": read_trulens}


def read_score_file(path: str | Path, fmt: str = "auto", log=lambda _m: None) -> ScoreFile:
    p = Path(path)
    if not p.exists():
        raise DataError("file not found", path=str(p))
    if fmt not in SCORE_FORMATS:
        raise DataError(f"unknown score format {fmt!r}: use {', '.join(SCORE_FORMATS)}", path=str(p))
    if fmt == "auto":
        fmt = detect_score_format(p)
        log(f"scores: {p}: detected {fmt}")
    return READERS[fmt](p)


def numeric_columns(sf: ScoreFile) -> tuple[list[str], list[str]]:
    """Columns that hold scores (most non-empty cells numeric), and the others (left out, said in a note)."""
    keep: list[str] = []
    other: list[str] = []
    for c, cells in sf.columns.items():
        present = [v for v in cells if not missing(v) and not (isinstance(v, str) and not v.strip())]
        numeric = sum(to_score(v)[1] is None for v in present)
        (keep if present and numeric * 2 >= len(present) else other).append(c)
    return keep, other


def text_key(claim: str | None, evidence: str | None = None) -> str:
    """Whitespace-insensitive key of the text a tool scored, so contexts joined by any separator match."""
    norm = lambda t: " ".join((t or "").split())  # noqa: E731
    return norm(claim) if evidence is None else f"{norm(claim)}\0{norm(evidence)}"


def keys_for(sf: ScoreFile, pair_ids: Iterable[str]) -> tuple[str, list[str]]:
    """How the file joins the pairs, and its row keys: by id when its ids name pairs, else by the text."""
    ids = set(pair_ids)
    if any(i is not None and i in ids for i in sf.ids) or sf.claims is None:
        missing = [j + 1 for j, i in enumerate(sf.ids) if i is None]
        if missing:
            raise DataError("id is missing", path=sf.path, row=missing[0], field="id")
        return "id", [str(i) for i in sf.ids]
    if sf.evidences is None:
        return "text", [text_key(c) for c in sf.claims]
    return "text", [text_key(c, e) for c, e in zip(sf.claims, sf.evidences)]
