"""ASQA/ALCE-style examples and system outputs, validated with errors that name file, row and field.

An example line: `sample_id` (or `id`), `question` (or `ambiguous_question`), `qa_pairs`
(`[{"question", "short_answers": [aliases]}]`), long reference answers (`annotations[].long_answer`
or `long_answers`), and `docs` (`[{"title", "text"}]`, cited as [1]..[k]).
An output line: `id` (or `sample_id`) and `output` (or `answer`).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attrib_audit.data.errors import DataError
from attrib_audit.data.loaders import iter_rows
from attrib_audit.text.answers import normalize_answer


@dataclass(frozen=True)
class QAPair:
    question: str
    short_answers: tuple[str, ...]


@dataclass(frozen=True)
class Passage:
    title: str
    text: str

    def as_evidence(self) -> str:
        """What a support scorer reads: the title carries the entity name the text often omits."""
        return f"{self.title}: {self.text}" if self.title else self.text


@dataclass(frozen=True, kw_only=True)
class AsqaExample:
    id: str
    question: str
    qa_pairs: tuple[QAPair, ...]
    long_answers: tuple[str, ...]
    docs: tuple[Passage, ...]


def _first(raw: dict, names: tuple[str, ...]) -> tuple[str, Any]:
    for name in names:
        if raw.get(name) not in (None, ""):
            return name, raw[name]
    return names[0], None


def _str(value: Any, *, path: str, row: int, field: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise DataError("must be a non-empty string", path=path, row=row, field=field)
    return value


def _list(value: Any, *, path: str, row: int, field: str) -> list:
    if not isinstance(value, list) or not value:
        raise DataError("must be a non-empty list", path=path, row=row, field=field)
    return value


def _example(raw: dict, *, path: str, row: int) -> AsqaExample:
    id_field, rid = _first(raw, ("sample_id", "id"))
    q_field, question = _first(raw, ("question", "ambiguous_question"))
    qa_pairs = []
    for j, qa in enumerate(_list(raw.get("qa_pairs"), path=path, row=row, field="qa_pairs")):
        where = f"qa_pairs[{j}]"
        if not isinstance(qa, dict):
            raise DataError("must be an object", path=path, row=row, field=where)
        aliases = _list(qa.get("short_answers"), path=path, row=row, field=f"{where}.short_answers")
        for k, alias in enumerate(aliases):
            _str(alias, path=path, row=row, field=f"{where}.short_answers[{k}]")
            if not normalize_answer(alias):
                raise DataError(f"alias {alias!r} is empty once normalised (it would match every answer)",
                                path=path, row=row, field=f"{where}.short_answers[{k}]")
        qa_pairs.append(QAPair(str(qa.get("question") or ""), tuple(aliases)))
    if raw.get("long_answers") is not None:
        longs = [_str(a, path=path, row=row, field=f"long_answers[{k}]")
                 for k, a in enumerate(_list(raw["long_answers"], path=path, row=row, field="long_answers"))]
    else:
        anns = _list(raw.get("annotations"), path=path, row=row, field="annotations")
        longs = [_str(a.get("long_answer") if isinstance(a, dict) else None, path=path, row=row,
                      field=f"annotations[{k}].long_answer") for k, a in enumerate(anns)]
    docs = []
    for k, d in enumerate(raw.get("docs") or []):
        if not isinstance(d, dict):
            raise DataError("must be an object with title and text", path=path, row=row, field=f"docs[{k}]")
        docs.append(Passage(str(d.get("title") or ""),
                            _str(d.get("text"), path=path, row=row, field=f"docs[{k}].text")))
    return AsqaExample(id=_str(None if rid is None else str(rid), path=path, row=row, field=id_field),
                       question=_str(question, path=path, row=row, field=q_field), qa_pairs=tuple(qa_pairs),
                       long_answers=tuple(longs), docs=tuple(docs))


def _unique(items: list, path: str, kind: str) -> dict:
    out: dict = {}
    for row, item_id, item in items:
        if item_id in out:
            raise DataError(f"duplicated {kind} id {item_id!r}", path=path, row=row, field="id")
        out[item_id] = item
    return out


def load_asqa(path: str | Path) -> dict[str, AsqaExample]:
    """Examples keyed by id, in file order."""
    p = str(path)
    items = [(row, ex.id, ex) for row, ex in ((row, _example(raw, path=p, row=row)) for row, raw in iter_rows(path))]
    if not items:
        raise DataError("no examples", path=p)
    return _unique(items, p, "example")


def load_outputs(path: str | Path) -> dict[str, str]:
    """A system's answers keyed by example id, in file order."""
    p = str(path)
    items = []
    for row, raw in iter_rows(path):
        id_field, rid = _first(raw, ("id", "sample_id"))
        if rid is None:
            raise DataError("missing example id", path=p, row=row, field=id_field)
        out_field = "answer" if "answer" in raw and "output" not in raw else "output"
        text = raw.get(out_field)  # an empty answer is a legitimate (bad) answer, so "" is kept
        if not isinstance(text, str):
            raise DataError("missing answer text (field `output` or `answer`)", path=p, row=row, field=out_field)
        items.append((row, str(rid), text))
    if not items:
        raise DataError("no outputs", path=p)
    return _unique(items, p, "output")
