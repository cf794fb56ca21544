"""HAGRID (Kamalloo et al. 2023; miracl/hagrid): answer sentences labelled attributable to the quotes they cite.

Each answer sentence cites quotes inline as `[1]` or `[1, 2]`, numbered by the quotes' `idx`.
One pair per labelled, citing sentence: claim = the sentence without its citation marks,
evidence = the cited quotes joined by a blank line, group = the query.
"""
from __future__ import annotations

import re

from attrib_audit.data.adapters.base import (
    BINARY,
    Adapter,
    Context,
    Skip,
    as_dict,
    as_int,
    as_list,
    digest,
    map_label,
    pair,
    text,
)
from attrib_audit.data.errors import DataError

_CITE = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")
_MARK = re.compile(r"\s*\[\d+(?:\s*,\s*\d+)*\]")  # a citation mark with the space before it


def _quotes(raw: dict, ctx: Context, row: int) -> dict[int, str]:
    out: dict[int, str] = {}
    for q in as_list(raw.get("quotes"), ctx=ctx, row=row, field_name="quotes"):
        q = as_dict(q, ctx=ctx, row=row, field_name="quotes")
        if "idx" not in q:
            raise DataError("each quote needs an `idx`", path=ctx.path, row=row, field="quotes")
        out[as_int(q["idx"], ctx=ctx, row=row, field_name="quotes.idx")] = text(q.get("text")) or ""
    return out


def convert(row: int, raw: dict, ctx: Context):
    quotes = _quotes(raw, ctx, row)
    query = text(raw.get("query"))
    group = text(raw.get("query_id")) or digest(query or "")
    answers = as_list(raw.get("answers"), ctx=ctx, row=row, field_name="answers")
    if not answers:
        yield Skip("query without answers")
    for a_i, answer in enumerate(answers):
        answer = as_dict(answer, ctx=ctx, row=row, field_name="answers")
        sentences = as_list(answer.get("sentences"), ctx=ctx, row=row, field_name="answers.sentences")
        if not sentences:
            yield Skip("answer without sentences")
        for s_i, sent in enumerate(sentences):
            sent = as_dict(sent, ctx=ctx, row=row, field_name="answers.sentences")
            label = map_label(sent.get("attributable"), BINARY, ctx=ctx, row=row, field_name="sentences.attributable")
            if isinstance(label, Skip):
                yield Skip("sentence unlabelled (attributable is null)")
                continue
            sentence = text(sent.get("text")) or ""
            cited = [int(n) for m in _CITE.finditer(sentence) for n in m.group(1).split(",")]
            if not cited:
                yield Skip("sentence cites no quote")
                continue
            if any(c not in quotes for c in cited):
                yield Skip("sentence cites a quote missing from quotes")
                continue
            claim = _MARK.sub("", sentence).strip()
            evidence = "\n\n".join(quotes[c] for c in dict.fromkeys(cited) if quotes[c].strip())
            index = sent.get("index", s_i)
            yield pair(claim=claim, evidence=evidence, label=label, question=query, group=f"hagrid:{group}",
                       id=f"hagrid:{group}:{a_i}:{index}")


ADAPTER = Adapter(
    name="hagrid", construct="attribution", dataset="hagrid",
    fields=("query", "quotes", "answers"),
    labels=("sentence attributable 1 -> 1", "sentence attributable 0 -> 0"),
    skips=("sentences with attributable null (unlabelled)", "sentences citing no quote",
           "sentences citing a quote idx not in quotes", "answers without sentences"),
    convert=convert,
    native="query, query_id, quotes [{idx, text}], answers [{answer, sentences [{text, attributable, index}]}]; "
           "one pair per sentence against its cited quotes; group = query",
)
