"""SummaC benchmark (Laban et al. 2022): summary sentences against their source documents."""
from __future__ import annotations

from attrib_audit.data.adapters.base import BINARY, Adapter, Context, Skip, digest, map_label, pair, text


def convert(row: int, raw: dict, ctx: Context):
    label = map_label(raw.get("label"), BINARY, ctx=ctx, row=row, field_name="label")
    if isinstance(label, Skip):
        yield label
        return
    doc = text(raw.get("document"))
    yield pair(claim=text(raw.get("claim")), evidence=doc, label=label, source=text(raw.get("dataset")),
               group=f"summac:{digest(doc or '')}")


ADAPTER = Adapter(
    name="summac", construct="boundary-summarisation", dataset="summac",
    fields=("document", "claim", "label"),
    labels=("label 1 -> 1 (consistent)", "label 0 -> 0 (inconsistent)"),
    skips=("rows with a missing label", "empty claim/document"),
    convert=convert,
    native="document, claim, label (+ dataset, cut); source = dataset when present; group = the document",
)
