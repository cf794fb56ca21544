"""TRUE (Honovich et al. 2022; google-research/true): 11 consistency datasets as `<name>_download.csv`.

The files share one layout (`grounding, generated_text, label` plus a pandas index column),
so the construct and dataset come from the file name; a file that is not one of the
eleven needs `--construct`.
"""
from __future__ import annotations

from attrib_audit.data.adapters.base import BINARY, Adapter, Context, Skip, digest, map_label, pair, text

# file-name prefix -> construct, longest prefixes first so qags_xsum is not read as qags
TRUE_FILES: dict[str, str] = {
    "qags_cnndm": "boundary-summarisation", "qags_xsum": "boundary-summarisation",
    "summeval": "boundary-summarisation", "frank": "boundary-summarisation", "mnbm": "boundary-summarisation",
    "dialfact": "boundary-dialogue", "begin": "boundary-dialogue", "q2": "boundary-dialogue",
    "fever": "fact-check", "vitc": "fact-check", "paws": "boundary-paraphrase",
}


def _key(stem: str) -> str | None:
    low = stem.lower()
    for key in sorted(TRUE_FILES, key=len, reverse=True):
        if low.startswith(key):
            return key
    return None


def construct_for(stem: str) -> str | None:
    key = _key(stem)
    return TRUE_FILES[key] if key else None


def dataset_for(stem: str) -> str:
    key = _key(stem)
    return f"true-{key}" if key else f"true-{stem}"


def convert(row: int, raw: dict, ctx: Context):
    label = map_label(raw.get("label"), BINARY, ctx=ctx, row=row, field_name="label")
    if isinstance(label, Skip):
        yield label
        return
    grounding = text(raw.get("grounding"))
    yield pair(claim=text(raw.get("generated_text")), evidence=grounding, label=label,
               id=f"{ctx.stem}:{row}", source=text(raw.get("model")), group=f"{ctx.stem}:{digest(grounding or '')}")


ADAPTER = Adapter(
    name="true", construct="per file", dataset="true",
    fields=("grounding", "generated_text", "label"),
    labels=("label 1 -> 1 (consistent)", "label 0 -> 0"),
    skips=("rows with a missing label", "empty grounding/generated_text"),
    convert=convert, construct_for=construct_for, dataset_for=dataset_for,
    native="CSV: grounding, generated_text, label (+ index, model, id); construct and dataset from the file name "
           "(" + ", ".join(f"{k}: {v}" for k, v in TRUE_FILES.items()) + "); group = grounding",
)
