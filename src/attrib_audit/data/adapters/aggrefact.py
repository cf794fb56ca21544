"""LLM-AggreFact (Tang et al. 2024; lytang/LLM-AggreFact): claims against grounding documents, 11 sources."""
from __future__ import annotations

from attrib_audit.data.adapters.base import BINARY, Adapter, Context, Skip, digest, map_label, pair, text


def convert(row: int, raw: dict, ctx: Context):
    label = map_label(raw.get("label"), BINARY, ctx=ctx, row=row, field_name="label")
    if isinstance(label, Skip):
        yield label
        return
    doc, source = text(raw.get("doc")), text(raw.get("dataset"))
    yield pair(claim=text(raw.get("claim")), evidence=doc, label=label, source=source,
               group=f"{source or 'aggrefact'}:{digest(doc or '')}")


ADAPTER = Adapter(
    name="aggrefact", construct="boundary-grounding", dataset="aggrefact",
    fields=("doc", "claim", "label"),
    labels=("label 1 -> 1 (supported)", "label 0 -> 0"),
    skips=("rows with a missing label", "empty claim/doc"),
    convert=convert,
    native="dataset, doc, claim, label; source = dataset; group = the document",
)
