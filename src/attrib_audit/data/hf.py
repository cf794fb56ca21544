"""Pinned Hugging Face loading (`--hf DATASET_ID --hf-split SPLIT --hf-revision SHA`) for online users.

The revision is recorded in the results; without a commit SHA the results may not be
reproducible, and we say so. Any failure (offline, unknown id, bad split) is one DataError line.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Callable, Iterator

from attrib_audit.data.errors import DataError
from attrib_audit.data.origin import HFSplitSource

_SHA = re.compile(r"^[0-9a-f]{40}$")


@dataclass
class HFSplit:
    """A loaded split: its rows (1-based), field names, and the `data` entry for results.json."""

    rows: Callable[[], Iterator[tuple[int, dict]]]
    columns: list[str]
    origin: HFSplitSource
    label: str  # hf:ID[SPLIT], used in messages and as the path of row errors


def _offline() -> bool:
    flags = (os.environ.get(k, "").strip().lower() for k in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE",
                                                             "TRANSFORMERS_OFFLINE"))
    return any(v in ("1", "true", "yes", "on") for v in flags)


def _one_line(exc: BaseException) -> str:
    first = next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), "")
    return f"{type(exc).__name__}: {first[:240]}" if first else type(exc).__name__


def pin_warning(dataset_id: str, revision: str | None) -> str | None:
    if revision is None:
        return (f"warning: --hf {dataset_id} without --hf-revision: the hub copy can change, so these results "
                "may not be reproducible; pin a commit SHA with --hf-revision")
    if not _SHA.match(revision):
        return (f"warning: --hf-revision {revision!r} is a branch or tag, not a 40-hex commit SHA: results may not "
                "be reproducible")
    return None


def load_hf(dataset_id: str, *, split: str | None, revision: str | None = None, config: str | None = None,
            log: Callable[[str], None] | None = None) -> HFSplit:
    label = f"hf:{dataset_id}[{split}]" if split else f"hf:{dataset_id}"
    note = pin_warning(dataset_id, revision)
    if note and log is not None:
        log(note)
    try:
        import datasets
    except ImportError:
        raise DataError("--hf needs the `datasets` package: pip install 'attrib-audit[hf]'", path=label) from None
    try:
        ds = datasets.load_dataset(dataset_id, config, split=split, revision=revision)
    except Exception as exc:  # datasets raises many types (connection, offline, missing split, not found)
        why = ("offline (HF_HUB_OFFLINE/HF_DATASETS_OFFLINE is set) and this dataset/revision is not in the local "
               "cache; run once online or pass local files") if _offline() else _one_line(exc)
        raise DataError(f"cannot load the Hugging Face dataset {dataset_id!r}"
                        f"{f' (revision {revision})' if revision else ''}: {why}", path=label) from None
    if isinstance(ds, datasets.DatasetDict):
        raise DataError(f"pass --hf-split (splits: {', '.join(ds)})", path=label)
    fingerprint = getattr(ds, "_fingerprint", None)
    origin = HFSplitSource(path=label, hf=dataset_id, config=config, split=split, revision=revision,
                           pinned=note is None, fingerprint=None if fingerprint is None else str(fingerprint),
                           hf_rows=ds.num_rows)
    return HFSplit(rows=lambda: ((i, dict(r)) for i, r in enumerate(ds, start=1)),
                    columns=list(ds.column_names), origin=origin, label=label)
