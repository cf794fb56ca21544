"""Loaders for provenance data: our JSONL schema and the public ALCE/ASQA, HotpotQA and MS MARCO v2.1 formats.

Each adapter maps one raw record to a ProvenanceExample or to a named skip reason;
skips are counted per reason and reported, never dropped silently. Bad records raise
a DataError naming the file, the record (1-based) and the field.
"""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np

from attrib_audit.data.errors import DataError
from attrib_audit.data.loaders import iter_rows
from attrib_audit.files.hashing import file_sha256
from attrib_audit.provenance.records import ExampleFile, Passage, ProvenanceExample, ProvenanceSet
from attrib_audit.text.answers import normalize_answer, split_citations
from attrib_audit.text.sentences import split_sentences

FORMATS = ("auto", "jsonl", "alce", "hotpotqa", "msmarco")


class Skip(Exception):
    """A record that cannot form an example (the reason is counted)."""


def _py(value: Any) -> Any:
    """Parquet/pandas values (numpy arrays, numpy scalars) as plain Python."""
    if isinstance(value, np.ndarray):
        return [_py(v) for v in value.tolist()]
    if isinstance(value, (list, tuple)):
        return [_py(v) for v in value]
    if isinstance(value, dict):
        return {k: _py(v) for k, v in value.items()}
    if isinstance(value, np.generic):
        return value.item()
    return value


def iter_records(path: str | Path) -> Iterator[tuple[int, dict]]:
    """(1-based record number, record) from JSONL, Parquet, a JSON array, or MS MARCO's column-wise JSON."""
    p = Path(path)
    if not p.exists():
        raise DataError("file not found", path=str(p))
    if p.suffix.lower() == ".json":
        with open(p, encoding="utf-8") as fh:
            try:
                obj = json.load(fh)
            except (json.JSONDecodeError, RecursionError):
                obj = None  # not one JSON document: read it as JSON lines
        if isinstance(obj, list):
            for i, rec in enumerate(obj, start=1):
                if not isinstance(rec, dict):
                    raise DataError("each record of the JSON array must be an object", path=str(p), row=i)
                yield i, rec
            return
        if isinstance(obj, dict) and isinstance(obj.get("query"), dict):  # MS MARCO: {field: {row_key: value}}
            for i, key in enumerate(obj["query"], start=1):
                yield i, {f: col.get(key) for f, col in obj.items() if isinstance(col, dict)}
            return
        if obj is not None:
            raise DataError("a .json file must hold an array of records or MS MARCO's column-wise object", path=str(p))
    for i, rec in iter_rows(p):
        yield i, _py(rec)


def detect_format(record: dict) -> str:
    keys = set(record)
    if {"passages", "gold"} <= keys:
        return "jsonl"
    if {"docs", "qa_pairs"} <= keys or "docs" in keys:
        return "alce"
    if {"context", "supporting_facts"} <= keys:
        return "hotpotqa"
    if {"passages", "query"} <= keys:
        return "msmarco"
    raise ValueError(f"cannot tell the format from fields {sorted(keys)}; pass --format")


def _need(rec: dict, name: str, kind: type | tuple[type, ...], where: dict) -> Any:
    if name not in rec or rec[name] is None:
        raise DataError("missing field", field=name, **where)
    if not isinstance(rec[name], kind):
        raise DataError(f"expected {getattr(kind, '__name__', kind)}, got {type(rec[name]).__name__}", field=name,
                        **where)
    return rec[name]


def _str_list(value: Any, name: str, where: dict) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise DataError("expected a list of strings", field=name, **where)
    return value


def _clean_passages(passages: list[Passage], skipped: Counter) -> list[Passage]:
    kept = [p for p in passages if p.text.strip()]
    skipped["empty_passage"] += len(passages) - len(kept)
    return kept


def _finish(ex_id: str, dataset: str, question: str | None, answers: list[str], units: list[str],
            passages: list[Passage], gold: set[str], citations: list[set[str]] | None, group: str | None,
            skipped: Counter) -> ProvenanceExample:
    kept = _clean_passages(passages, skipped)
    ids = {p.id for p in kept}
    skipped["gold_on_empty_passage"] += len(gold - ids)
    units_kept, cites_kept = [], []
    for i, u in enumerate(units):
        if u.strip():
            units_kept.append(u.strip())
            cites_kept.append(frozenset((citations[i] if citations else set()) & ids))
    if not units_kept:
        raise Skip("no_answer_units")
    if not kept:
        raise Skip("no_passages")
    return ProvenanceExample(id=ex_id, dataset=dataset, question=question, answers=tuple(answers),
                             units=tuple(units_kept), passages=tuple(kept), gold=frozenset(gold & ids),
                             citations=tuple(cites_kept), group=group or ex_id)


def _adapt_jsonl(rec: dict, where: dict, dataset: str, skipped: Counter) -> ProvenanceExample:
    """Our schema: id, question, answers, passages [{id, title, text}], gold [ids]; units from `units`,
    else the sentences of `answer`, else the question itself (WiCE: the claim is the unit)."""
    ex_id = str(_need(rec, "id", (str, int), where))
    raw = _need(rec, "passages", list, where)
    passages = []
    for j, p in enumerate(raw):
        if not isinstance(p, dict) or "id" not in p or not isinstance(p.get("text"), str):
            raise DataError(f"passage {j} needs an id and a text", field="passages", **where)
        passages.append(Passage(str(p["id"]), p["text"], p.get("title")))
    ids = [p.id for p in passages]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise DataError(f"passage id {dup!r} appears twice", field="passages", **where)
    gold = {str(g) for g in _need(rec, "gold", list, where)}
    if not gold <= set(ids):
        raise DataError(f"gold ids {sorted(gold - set(ids))} are not passage ids", field="gold", **where)
    question = rec.get("question")
    if rec.get("units") is not None:
        units = _str_list(rec["units"], "units", where)
    elif isinstance(rec.get("answer"), str):
        units = split_sentences(rec["answer"])
    elif isinstance(question, str):
        units = [question]
    else:
        raise DataError("no answer units: give `units`, `answer` or `question`", **where)
    citations = None
    if rec.get("citations") is not None:
        cites = rec["citations"]
        if not isinstance(cites, list) or len(cites) != len(units):
            raise DataError("citations must hold one list of passage ids per unit", field="citations", **where)
        citations = [{str(c) for c in cs} for cs in cites]
        bad = set().union(*citations) - set(ids)
        if bad:
            raise DataError(f"cited ids {sorted(bad)} are not passage ids", field="citations", **where)
    group = rec.get("group") or rec.get("claim_wiki_title")  # WiCE: claims about one article share evidence
    return _finish(ex_id, str(rec.get("dataset") or dataset), question, _str_list(rec.get("answers"), "answers", where),
                   units, passages, gold, citations, str(group) if group else None, skipped)


def _adapt_alce(rec: dict, where: dict, dataset: str, skipped: Counter) -> ProvenanceExample:
    """ALCE/ASQA: units are the sentences of `output` (a system answer) or `answer` (the gold long answer),
    `[n]` cites docs[n-1]; gold docs have `answers_found`, else contain a normalised short answer."""
    question = _need(rec, "question", str, where)
    docs = _need(rec, "docs", list, where)
    passages = []
    for j, d in enumerate(docs):
        if not isinstance(d, dict) or not isinstance(d.get("text"), str):
            raise DataError(f"doc {j} needs a text", field="docs", **where)
        passages.append(Passage(str(j + 1), d["text"], d.get("title")))
    answers = []
    for qa in rec.get("qa_pairs") or []:
        answers.extend(_str_list(qa.get("short_answers"), "qa_pairs.short_answers", where))
    text = rec.get("output") if isinstance(rec.get("output"), str) else rec.get("answer")
    if isinstance(text, list):
        text = text[0] if text else None
    if not isinstance(text, str) and rec.get("annotations"):
        text = rec["annotations"][0].get("long_answer")
    if not isinstance(text, str):
        raise DataError("no answer text: need `output`, `answer` or `annotations[0].long_answer`", **where)
    units, citations = [], []
    for sent in split_sentences(text):
        clean, cited = split_citations(sent)
        out_of_range = [n for n in cited if not 1 <= n <= len(docs)]
        skipped["citation_out_of_range"] += len(out_of_range)
        units.append(clean)
        citations.append({str(n) for n in cited if 1 <= n <= len(docs)})
    norm_answers = [a for a in (normalize_answer(x) for x in answers) if a]
    gold = set()
    for p, d in zip(passages, docs):
        found = d.get("answers_found")
        if found is not None:
            hit = any(bool(x) for x in found)
        else:
            padded = f" {normalize_answer(p.text)} "
            hit = any(f" {a} " in padded for a in norm_answers)
        if hit:
            gold.add(p.id)
    ex_id = str(rec.get("sample_id") or rec.get("id") or f"{dataset}:{where['row']}")
    return _finish(ex_id, dataset, question, answers, units, passages, gold, citations, None, skipped)


def _adapt_hotpotqa(rec: dict, where: dict, dataset: str, skipped: Counter) -> ProvenanceExample:
    """HotpotQA: passages are the context paragraphs (id = title), gold = titles in supporting_facts;
    the single unit is the question followed by its answer (HotpotQA has no long answer)."""
    question = _need(rec, "question", str, where)
    answer = _need(rec, "answer", str, where)
    context, facts = rec.get("context"), rec.get("supporting_facts")
    if isinstance(context, dict):  # the Hugging Face layout: {"title": [...], "sentences": [[...]]}
        context = list(zip(context.get("title") or [], context.get("sentences") or []))
    if isinstance(facts, dict):
        facts = list(zip(facts.get("title") or [], facts.get("sent_id") or []))
    if not isinstance(context, list) or not isinstance(facts, list):
        raise DataError("context and supporting_facts must be lists (or the HF column dicts)", field="context", **where)
    passages, seen = [], set()
    for j, item in enumerate(context):
        if not isinstance(item, (list, tuple)) or len(item) != 2 or not isinstance(item[1], list):
            raise DataError(f"context[{j}] must be [title, [sentences]]", field="context", **where)
        title = str(item[0])
        if title in seen:
            raise DataError(f"paragraph title {title!r} appears twice", field="context", **where)
        seen.add(title)
        passages.append(Passage(title, "".join(item[1]).strip(), title))
    gold = {str(f[0]) for f in facts}
    if not gold <= seen:
        raise DataError(f"supporting titles {sorted(gold - seen)} are not in the context", field="supporting_facts",
                        **where)
    ex_id = str(rec.get("_id") or rec.get("id") or f"{dataset}:{where['row']}")
    return _finish(ex_id, dataset, question, [answer], [f"{question} {answer}"], passages, gold, None, None, skipped)


_NO_ANSWER = "no answer present."


def _adapt_msmarco(rec: dict, where: dict, dataset: str, skipped: Counter) -> ProvenanceExample:
    """MS MARCO v2.1: units are the sentences of the well-formed answer (else the answer); gold passages have
    is_selected = 1. MS MARCO answers are whole sentences, so there are no short answers for h(u)."""
    query = _need(rec, "query", str, where)
    raw = rec.get("passages")
    if isinstance(raw, dict):  # the Hugging Face layout: {"is_selected": [...], "passage_text": [...], "url": [...]}
        raw = [dict(zip(raw, vals)) for vals in zip(*raw.values())]
    if not isinstance(raw, list):
        raise DataError("passages must be a list of {is_selected, passage_text}", field="passages", **where)
    passages, gold = [], set()
    for j, p in enumerate(raw):
        if not isinstance(p, dict) or not isinstance(p.get("passage_text"), str) or "is_selected" not in p:
            raise DataError(f"passage {j} needs passage_text and is_selected", field="passages", **where)
        passages.append(Passage(str(j), p["passage_text"], p.get("url")))
        if int(p["is_selected"]) == 1:
            gold.add(str(j))
    well = rec.get("wellFormedAnswers")
    well = [] if well in (None, "[]") else well
    answers = rec.get("answers") or []
    text = next((a for a in [*well, *answers] if isinstance(a, str) and a.strip()), None)
    if text is None or text.strip().lower() == _NO_ANSWER:
        raise Skip("no_answer_present")
    if not gold:
        raise Skip("no_selected_passage")
    ex_id = str(rec.get("query_id") if rec.get("query_id") is not None else f"{dataset}:{where['row']}")
    return _finish(ex_id, dataset, query, [], split_sentences(text), passages, gold, None, None, skipped)


ADAPTERS: dict[str, Callable[[dict, dict, str, Counter], ProvenanceExample]] = {
    "jsonl": _adapt_jsonl, "alce": _adapt_alce, "hotpotqa": _adapt_hotpotqa, "msmarco": _adapt_msmarco,
}


def load_provenance(path: str | Path, *, format: str = "auto", dataset: str | None = None,
                    limit: int | None = None) -> ProvenanceSet:
    """Load one file; `limit` keeps the first N examples (the count left out is reported as a skip)."""
    if format not in FORMATS:
        raise ValueError(f"unknown format {format!r}; use one of {', '.join(FORMATS)}")
    p = Path(path)
    name = dataset or p.stem
    skipped: Counter = Counter()
    examples: list[ProvenanceExample] = []
    fmt = None if format == "auto" else format
    for row, rec in iter_records(p):
        where = {"path": str(p), "row": row}
        if fmt is None:
            try:
                fmt = detect_format(rec)
            except ValueError as exc:
                raise DataError(str(exc), path=str(p), row=row) from None
        if limit is not None and len(examples) >= limit:
            skipped["beyond_limit"] += 1
            continue
        try:
            examples.append(ADAPTERS[fmt](rec, where, name, skipped))
        except Skip as why:
            skipped[str(why)] += 1
    if not examples or fmt is None:  # no rows: no format detected either
        raise DataError(f"no usable examples (skipped: {dict(skipped) or 'none'})", path=str(p))
    ids = Counter(e.id for e in examples)
    dup = [i for i, c in ids.items() if c > 1]
    if dup:
        raise DataError(f"example id {dup[0]!r} appears {ids[dup[0]]} times", path=str(p), field="id")
    origin = [ExampleFile(path=str(p), sha256=file_sha256(p), format=fmt, examples=len(examples),
                          units=sum(len(e.units) for e in examples))]
    return ProvenanceSet(examples, {k: v for k, v in sorted(skipped.items()) if v}, origin)
