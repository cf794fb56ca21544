"""VitaminC (Schuster et al. 2021; tals/vitaminc): contrastive Wikipedia claim/evidence pairs."""
from __future__ import annotations

from attrib_audit.data.adapters.base import Adapter, Context, Skip, map_label, pair, text


def convert(row: int, raw: dict, ctx: Context):
    nei = None if ctx.options.nei == "drop" else 0
    mapping = {"supports": 1, "refutes": 0, "not enough info": nei}
    label = map_label(raw.get("label"), mapping, ctx=ctx, row=row, field_name="label")
    if isinstance(label, Skip):
        yield label
        return
    case = text(raw.get("case_id")) or text(raw.get("id"))  # one claim's rows share it: they form one cluster
    yield pair(claim=text(raw.get("claim")), evidence=text(raw.get("evidence")), label=label,
               id=text(raw.get("unique_id")), group=f"vitaminc:{case}" if case else None,
               source=text(raw.get("revision_type")))


ADAPTER = Adapter(
    name="vitaminc", construct="fact-check", dataset="vitaminc",
    fields=("unique_id", "case_id", "claim", "evidence", "label"),
    labels=("'SUPPORTS' -> 1", "'REFUTES' -> 0", "'NOT ENOUGH INFO' -> dropped (default) or 0 with --nei 0"),
    skips=("NOT ENOUGH INFO rows unless --nei 0", "rows with a missing label", "empty claim/evidence"),
    convert=convert,
    native="unique_id, case_id, claim, evidence, label (+ page, revision_type); group = case_id (or a shared "
           "native id); source = revision_type",
    required=("claim", "evidence", "label"), clusters="case_id or id",
)
