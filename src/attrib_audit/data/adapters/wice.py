"""WiCE (Kamoi et al. 2023; ryokamoi/wice): Wikipedia claims against the sentences of a cited web page.

Two views of one native row: a pair (claim vs. the page's sentences joined by a space) and a
provenance example (the sentences as passages, gold = the union of the human
supporting-sentence sets), the latter for the provenance diagnostics.
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Callable, Iterable

from attrib_audit.data.adapters.base import Adapter, Context, Skip, as_int, as_list, digest, map_label, pair, text
from attrib_audit.data.errors import DataError
from attrib_audit.data.loaders import iter_rows

_TITLE = "(meta data) TITLE:"


def _labels(ctx: Context) -> dict[str, int | None]:
    return {"supported": 1, "partially_supported": ctx.options.wice_partial, "not_supported": 0}


def _sentences(raw: dict, ctx: Context, row: int) -> list[str]:
    return [text(s) or "" for s in as_list(raw.get("evidence"), ctx=ctx, row=row, field_name="evidence")]


def _meta(raw: dict) -> dict:
    meta = raw.get("meta")
    return meta if isinstance(meta, dict) else {}


def convert(row: int, raw: dict, ctx: Context):
    label = map_label(raw.get("label"), _labels(ctx), ctx=ctx, row=row, field_name="label")
    if isinstance(label, Skip):
        yield label
        return
    meta = _meta(raw)
    native_id, title = text(meta.get("id")), text(meta.get("claim_title"))
    yield pair(claim=text(raw.get("claim")), evidence=" ".join(_sentences(raw, ctx, row)), label=label,
               id=f"wice-{native_id}" if native_id else None, source="wikipedia-citation",
               group=f"wice:{digest(title)}" if title else None)


def provenance_example(row: int, raw: dict, ctx: Context) -> dict | Skip:
    """One provenance example in the layout of the shared `wice_provenance.jsonl`, or a counted skip."""
    sentences = _sentences(raw, ctx, row)
    if not sentences:
        return Skip("no evidence sentences")
    if text(raw.get("label")) is None:
        return Skip("label missing (label)")
    gold: set[int] = set()
    for group in as_list(raw.get("supporting_sentences"), ctx=ctx, row=row, field_name="supporting_sentences"):
        for item in as_list(group, ctx=ctx, row=row, field_name="supporting_sentences"):
            i = as_int(item, ctx=ctx, row=row, field_name="supporting_sentences")
            if not 0 <= i < len(sentences):
                raise DataError(f"supporting sentence {i} is outside the {len(sentences)} evidence sentences",
                                path=ctx.path, row=row, field="supporting_sentences")
            gold.add(i)
    if not gold:
        return Skip("no supporting sentences")
    first = sentences[0]
    title = first[len(_TITLE):].strip() if first.startswith(_TITLE) else ""
    meta = _meta(raw)
    native_id = text(meta.get("id")) or f"{ctx.stem}:{row}"
    return {"id": f"wiceprov-{native_id}", "dataset": "wice_provenance", "question": text(raw.get("claim")),
            "answers": [], "passages": [{"id": f"s{i}", "title": title, "text": s} for i, s in enumerate(sentences)],
            "gold": [f"s{i}" for i in sorted(gold)], "label_raw": text(raw.get("label")),
            "claim_wiki_title": text(meta.get("claim_title"))}


def wice_provenance_rows(rows: Iterable[tuple[int, dict]], *, path: str,
                         stem: str | None = None) -> tuple[list[dict], Counter]:
    """Provenance examples from native WiCE rows, with the count of skipped rows per reason."""
    ctx = Context(path=path, stem=stem or Path(path).stem)
    examples: list[dict] = []
    skipped: Counter[str] = Counter()
    for row, raw in rows:
        item = provenance_example(row, raw, ctx)
        if isinstance(item, Skip):
            skipped[item.reason] += 1
        else:
            examples.append(item)
    return examples, skipped


def load_wice_provenance(path: str | Path, *, log: Callable[[str], None] | None = print) -> list[dict]:
    """Provenance examples (plain dicts: id, dataset, question, answers, passages, gold, ...) of a WiCE file.

    Rows without supporting sentences (not_supported claims) have no gold and are skipped;
    the count is logged, never silent.
    """
    examples, skipped = wice_provenance_rows(iter_rows(path), path=str(path))
    if log is not None:
        total = len(examples) + sum(skipped.values())
        detail = "; ".join(f"{reason}: {n}" for reason, n in sorted(skipped.items()))
        log(f"wice provenance: {path}: {total} rows -> {len(examples)} examples"
            + (f"; skipped {sum(skipped.values())} ({detail})" if skipped else ""))
    if not examples:
        raise DataError("no provenance examples (no row has supporting sentences)", path=str(path))
    return examples


ADAPTER = Adapter(
    name="wice", construct="fact-check", dataset="wice",
    fields=("claim", "evidence", "label", "supporting_sentences"),
    labels=("'supported' -> 1", "'partially_supported' -> 0 (or 1 with --wice-partial 1)", "'not_supported' -> 0"),
    skips=("rows with a missing label", "empty claim/evidence",
           "provenance view: rows without supporting sentences (not_supported)"),
    convert=convert,
    native="claim, evidence (list of sentences), label, supporting_sentences (list of index lists), "
           "meta {id, claim_title}; group = claim_title; also provenance examples (load_wice_provenance)",
    required=("claim", "evidence", "label"), clusters="meta.claim_title",
)
