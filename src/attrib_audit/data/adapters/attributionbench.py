"""AttributionBench (Li et al. 2024; osunlp/AttributionBench): claims with a list of cited references."""
from __future__ import annotations

from attrib_audit.data.adapters.base import Adapter, Context, Skip, as_list, digest, map_label, pair, text

LABELS = {"attributable": 1, "not attributable": 0}


def convert(row: int, raw: dict, ctx: Context):
    texts = [text(r) for r in as_list(raw.get("references"), ctx=ctx, row=row, field_name="references")]
    refs = [r for r in texts if r is not None and r.strip()]
    if not refs:
        yield Skip("no non-empty reference")
        return
    label = map_label(raw.get("attribution_label"), LABELS, ctx=ctx, row=row, field_name="attribution_label")
    if isinstance(label, Skip):
        yield label
        return
    source, question = text(raw.get("src_dataset")), text(raw.get("question"))
    yield pair(claim=text(raw.get("claim")), evidence="\n\n".join(refs), label=label, id=text(raw.get("id")),
               source=source, question=question,
               group=f"{source or 'attributionbench'}:{digest(question or text(raw.get('claim')) or '')}")


ADAPTER = Adapter(
    name="attributionbench", construct="attribution", dataset="attributionbench",
    fields=("claim", "references", "attribution_label"),
    labels=("'attributable' -> 1", "'not attributable' -> 0"),
    skips=("rows with no non-empty reference", "rows with a missing label", "empty claim"),
    convert=convert,
    native="id, question, claim, references (list), attribution_label, src_dataset; evidence = non-empty "
           "references joined by a blank line; source = src_dataset; group = question within source",
)
