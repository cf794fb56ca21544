"""Published meta-evaluation layouts converted to rows of our score-only schema (graded rating, system, group).

SummEval (Fabbri et al. 2021, Yale-LILY/SummEval) ships `model_annotations.aligned.jsonl`: one line per
(article `id`, `model_id`) with the `decoded` summary, `references`, `filepath` and two lists of ratings,
`expert_annotations` (3 experts) and `turker_annotations` (5 crowd workers), each entry holding `coherence`,
`consistency`, `fluency` and `relevance` on a 1-5 scale. The article itself is only in the file the repository's
`pair_data.py` writes (the same lines plus `text`), and the metrics' scores only in `*.aligned.scored.jsonl`
(`metric_scores_1` against the original reference, `metric_scores_11` against all eleven; `rouge` nested).
FRANK (Pagnoni et al. 2021, artidoro/frank) ships `human_annotations.json` (a list of records with `hash`,
`model_name`, `Factuality` in [0, 1], ...) and `baseline_factuality_metrics_outputs.json` (records with `hash`,
`model_name` and one field per metric), which its `evaluate.py` joins one-to-one on (`hash`, `model_name`).
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attrib_audit.data.errors import DataError
from attrib_audit.data.loaders import iter_rows

ASPECTS = ("consistency", "coherence", "fluency", "relevance")
ANNOTATORS = ("expert", "turker")
FRANK_KEYS = ("hash", "model_name")
# our schema's columns: a native metric of the same name would be read as something else
RESERVED = frozenset({"id", "dataset", "claim", "evidence", "label", "source", "question", "group", "construct",
                      "system", "rating", "inclusion_prob"})


@dataclass(frozen=True, kw_only=True)
class Converted:
    """Rows of our schema from a published layout, and what the conversion left out or could not carry."""

    rows: list[dict]
    score_columns: tuple[str, ...]  # the metric columns the rows carry (FRANK); empty for SummEval
    missing: dict[str, int]  # per metric: rows whose value was missing or NaN (written as null, never imputed)
    texts: bool  # whether claim and evidence are present (text scorers can run)
    notes: tuple[str, ...]  # one line each: what the reader must know about the converted file


def _number(value: Any) -> float | None:
    """A finite number, or None (strings, booleans, NaN and infinities are not ratings)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    v = float(value)
    return v if math.isfinite(v) else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _flat_scores(value: Any, *, path: str, row: int, field: str) -> dict[str, float | None]:
    """A SummEval `metric_scores_*` object as {metric: number}: nested objects flattened, text (its `id`) skipped."""
    if not isinstance(value, dict):
        raise DataError(f"expected an object of metric scores, got {type(value).__name__}", path=path, row=row,
                        field=field)
    out: dict[str, float | None] = {}
    for key, v in value.items():
        if isinstance(v, dict):
            out.update(_flat_scores(v, path=path, row=row, field=field))
        elif isinstance(v, list) and len(v) == 1:
            out[key] = _number(v[0])
        elif not isinstance(v, str):
            out[key] = _number(v)
    return out


def summeval_rows(path: str | Path, *, aspect: str = "consistency", annotators: str = "expert",
                  scores: str = "metric_scores_1") -> Converted:
    """One row per (article, system) of SummEval's aligned annotations, rated by the mean of one aspect.

    Args:
        path: `model_annotations.aligned.jsonl` (or the paired file that adds the article as `text`).
        aspect: which of the four rated aspects becomes `rating`.
        annotators: `expert` (the paper's judgements) or `turker` (crowd workers).

        scores: the field of the scored file whose metrics become score columns (`metric_scores_1`; nested
            `rouge` flattened, a one-element list read as its number), when the lines carry it.

    Returns:
        Rows with `id`, `dataset`, `group` (the article id), `system` (model_id), `rating` and `summary`; with
        `claim` (the summary) and `evidence` (the article) when every line carries `text`; one column per metric
        of `scores` when the lines carry it (a missing value written as null and counted).

    Raises:
        DataError: a line without a required field, an annotation that is not a number, a repeated
            (id, model_id): one line naming file, row and field.
    """
    if aspect not in ASPECTS:
        raise DataError(f"unknown SummEval aspect {aspect!r}: use one of {', '.join(ASPECTS)}")
    if annotators not in ANNOTATORS:
        raise DataError(f"unknown SummEval annotators {annotators!r}: use one of {', '.join(ANNOTATORS)}")
    where = str(path)
    field = f"{annotators}_annotations"
    rows: list[dict] = []
    seen: dict[tuple[str, str], int] = {}
    with_text = 0
    metrics: dict[str, int] = {}  # metric -> rows without a value
    for row, raw in iter_rows(path):
        for need in ("id", "model_id", "decoded", field):
            if need not in raw:
                raise DataError(f"missing field {need!r} of the SummEval aligned layout", path=where, row=row,
                                field=need)
        item, system = _text(raw["id"]), _text(raw["model_id"])
        if item is None or system is None:
            bad = "id" if item is None else "model_id"
            raise DataError(f"{bad} must be a non-empty string, got {raw[bad]!r}", path=where, row=row, field=bad)
        if (item, system) in seen:
            raise DataError(f"repeated (id, model_id) ({item!r}, {system!r}), first at row {seen[item, system]}",
                            path=where, row=row, field="id")
        seen[item, system] = row
        notes = raw[field]
        if not isinstance(notes, list) or not notes:
            raise DataError(f"expected a non-empty list of ratings, got {notes!r:.60}", path=where, row=row,
                            field=field)
        values = []
        for k, note in enumerate(notes):
            value = _number(note.get(aspect)) if isinstance(note, dict) else None
            if value is None:
                got = note.get(aspect, "nothing") if isinstance(note, dict) else note
                raise DataError(f"annotation {k + 1} has no numeric {aspect!r} (got {got!r:.40})", path=where,
                                row=row, field=field)
            values.append(value)
        summary = raw["decoded"] if isinstance(raw["decoded"], str) else ""
        out = {"id": f"{item}:{system}", "dataset": "summeval", "group": item, "system": system,
               "rating": sum(values) / len(values), "summary": summary}
        if scores in raw:
            for metric, value in _flat_scores(raw[scores], path=where, row=row, field=scores).items():
                if metric in RESERVED or metric in out:
                    raise DataError(f"metric {metric!r} has the name of one of our columns", path=where, row=row,
                                    field=scores)
                metrics.setdefault(metric, 0)
                out[metric] = value
        article = _text(raw.get("text"))
        if article is not None and summary.strip():
            with_text += 1
            out.update(claim=summary, evidence=article)
        rows.append(out)
    if not rows:
        raise DataError("no rows", path=where)
    texts = with_text == len(rows)
    for r in rows:  # a metric a line lacks is missing there, like a null
        for metric in metrics:
            if r.setdefault(metric, None) is None:
                metrics[metric] += 1
    if not texts:
        for r in rows:  # a file is pairs or scores only, never half of each
            r.pop("claim", None)
            r.pop("evidence", None)
    notes_out: tuple[str, ...] = (() if texts else
                 (f"{where}: no article (`text`) on {len(rows) - with_text} of {len(rows)} lines: score-only rows "
                  "(the summary is kept as `summary`) that text scorers such as lexical cannot score",))
    notes_out += tuple(f"{where}: metric {m!r}: {n} of {len(rows)} rows missing or NaN (null, left out of that metric)"
                       for m, n in metrics.items() if n)
    return Converted(rows=rows, score_columns=tuple(metrics), missing=metrics, texts=texts, notes=notes_out)


def _json_records(path: str | Path) -> list[dict]:
    """A JSON file holding a list of objects (FRANK's layout), read whole."""
    p = Path(path)
    if not p.is_file():
        raise DataError("file not found" if not p.exists() else "is a folder, not a data file", path=str(p))
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise DataError(f"not UTF-8 (byte {exc.start + 1})", path=str(p)) from None
    except json.JSONDecodeError as exc:
        raise DataError(f"not JSON ({exc.msg} at line {exc.lineno})", path=str(p)) from None
    except RecursionError:
        raise DataError("not JSON (nested too deeply)", path=str(p)) from None
    if not isinstance(data, list):
        raise DataError(f"expected a JSON list of records, got {type(data).__name__}", path=str(p))
    for i, rec in enumerate(data, start=1):
        if not isinstance(rec, dict):
            raise DataError(f"expected an object, got {type(rec).__name__}", path=str(p), row=i)
    return data


def _frank_key(rec: dict, *, path: str, row: int) -> tuple[str, str]:
    for k in FRANK_KEYS:
        if _text(rec.get(k)) is None:
            got = "nothing" if k not in rec else repr(rec[k])
            raise DataError(f"{k} must be a non-empty string, got {got}", path=path, row=row, field=k)
    return rec["hash"], rec["model_name"]


def _metric_columns(records: list[dict], *, path: str) -> tuple[list[str], list[str]]:
    """The numeric fields of the metrics file (every value a number or null) and those with no value at all.

    A field of only strings (split, dataset, texts) is metadata; a field mixing numbers and strings is an error.
    """
    columns: dict[str, None] = {}
    for rec in records:
        columns.update(dict.fromkeys(rec))
    numeric, empty = [], []
    for col in columns:
        if col in FRANK_KEYS:
            continue
        kinds = set()
        first_text = None
        for i, rec in enumerate(records, start=1):
            v = rec.get(col)
            if v is None or (isinstance(v, float) and math.isnan(v)):
                continue
            is_num = isinstance(v, (int, float)) and not isinstance(v, bool)
            kinds.add(is_num)
            if not is_num and first_text is None:
                first_text = i
        if kinds == {True, False}:
            raise DataError(f"metric {col!r} mixes numbers and non-numbers ({records[first_text - 1][col]!r:.40})"
                            if first_text else f"metric {col!r} mixes numbers and non-numbers",
                            path=path, row=first_text, field=col)
        if kinds == {True}:
            numeric.append(col)
        elif not kinds:
            empty.append(col)
    return numeric, empty


def frank_rows(human: str | Path, metrics: str | Path) -> Converted:
    """FRANK's human judgements joined one-to-one with its baseline metric outputs on (hash, model_name).

    Args:
        human: `human_annotations.json`: `Factuality` (share of sentences without a factual error) is the rating.
        metrics: `baseline_factuality_metrics_outputs.json`: every numeric field becomes a score column.

    Returns:
        Score-only rows (`id`, `dataset`, `group` = hash, `system` = model_name, `rating`, `source` = FRANK's own
        `dataset` field when present, `split` when present, one column per metric); a metric's missing or NaN value
        is written as null and counted in `missing`, never imputed.

    Raises:
        DataError: a missing key, a non-numeric Factuality, a repeated or unmatched (hash, model_name), a metric
            column that clashes with our schema: one line naming file, record and field or key.
    """
    hpath, mpath = str(human), str(metrics)
    h_recs, m_recs = _json_records(human), _json_records(metrics)
    if not h_recs:
        raise DataError("no records", path=hpath)
    by_key: dict[tuple[str, str], tuple[int, dict]] = {}
    for i, rec in enumerate(m_recs, start=1):
        key = _frank_key(rec, path=mpath, row=i)
        if key in by_key:
            raise DataError(f"repeated key (hash, model_name) {key!r}, first at record {by_key[key][0]}",
                            path=mpath, row=i, field="hash")
        by_key[key] = (i, rec)
    columns, empty = _metric_columns(m_recs, path=mpath)
    clash = [c for c in columns if c in RESERVED]
    if clash:
        raise DataError(f"metric column {clash[0]!r} has the name of one of our schema's columns", path=mpath,
                        field=clash[0])
    if not columns:
        raise DataError("no numeric metric fields besides hash and model_name", path=mpath)
    missing = dict.fromkeys(columns, 0)
    rows: list[dict] = []
    used: dict[tuple[str, str], int] = {}
    for i, rec in enumerate(h_recs, start=1):
        key = _frank_key(rec, path=hpath, row=i)
        if key in used:
            raise DataError(f"repeated key (hash, model_name) {key!r}, first at record {used[key]}", path=hpath,
                            row=i, field="hash")
        used[key] = i
        if key not in by_key:
            raise DataError(f"key (hash, model_name) {key!r} has no record in {mpath}", path=hpath, row=i,
                            field="hash")
        rating = _number(rec.get("Factuality"))
        if rating is None:
            got = "nothing" if "Factuality" not in rec else repr(rec["Factuality"])
            raise DataError(f"Factuality must be a finite number, got {got:.40}", path=hpath, row=i,
                            field="Factuality")
        out: dict[str, Any] = {"id": f"{key[0]}:{key[1]}", "dataset": "frank", "group": key[0], "system": key[1],
                               "rating": rating}
        if _text(rec.get("dataset")):
            out["source"] = rec["dataset"]
        if _text(rec.get("split")):
            out["split"] = rec["split"]
        scores = by_key[key][1]
        for col in columns:
            v = _number(scores.get(col))
            if v is None:
                missing[col] += 1
            out[col] = v
        rows.append(out)
    unmatched = [k for k in by_key if k not in used]
    if unmatched:
        row, _ = by_key[unmatched[0]]
        raise DataError(f"key (hash, model_name) {unmatched[0]!r} has no human annotation in {hpath}"
                        + (f" ({len(unmatched)} such keys)" if len(unmatched) > 1 else ""),
                        path=mpath, row=row, field="hash")
    notes = tuple(f"{mpath}: metric {c!r} has no value on any record: left out" for c in empty)
    notes += tuple(f"{mpath}: metric {c!r}: {n} of {len(rows)} rows missing or NaN (null, left out of that metric)"
                   for c, n in missing.items() if n)
    return Converted(rows=rows, score_columns=tuple(columns), missing=missing, texts=False, notes=notes)
