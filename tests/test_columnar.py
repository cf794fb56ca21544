"""Column-wise batch validation gives exactly the per-row result, and hands every doubtful batch back."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from attrib_audit.data import DataError
from attrib_audit.data.columnar import batch_to_table
from attrib_audit.data.loaders import rows_to_records
from attrib_audit.data.origin import SkippedRow
from attrib_audit.data.records import PairTable
from attrib_audit.data.sources import DataSpec
from attrib_audit.engine.stream import iter_tables

COLUMNS = ("ids", "datasets", "claims", "evidences", "sources", "questions", "groups", "constructs", "systems")


def per_row(batch: pa.RecordBatch, first_row: int, **kw) -> PairTable:
    rows = list(enumerate(batch.to_pylist(), start=first_row))
    return PairTable.from_records(rows_to_records(rows, path="dir/file.parquet", seen_ids={}, **kw))


def assert_same(a: PairTable, b: PairTable) -> None:
    for name in COLUMNS:
        assert getattr(a, name) == getattr(b, name), name
    assert a.labels.dtype == b.labels.dtype and np.array_equal(a.labels, b.labels)
    assert a.inclusion_probs is None and b.inclusion_probs is None


BASE = {"claim": ["Paris is big", " x ", "ü naïve", "4"], "evidence": ["Paris.", "y", "z\u00a0w", "5"]}
CASES = [
    ({**BASE, "label": [0, 1, 1, 0]}, {}),
    ({**BASE, "label": [True, False, True, True], "id": ["a", "", None, "d"]}, {}),
    ({**BASE, "label": [1.0, 0.0, 0.0, 1.0], "id": [10, 11, 12, 13], "dataset": ["s", "", None, "t"]}, {}),
    ({**BASE, "label": ["true", "0", " FALSE ", "1"], "group": ["g", None, "", "g"], "source": ["a", None, "", "b"],
      "question": ["q?", None, "q?", ""], "construct": ["c", None, "", "c"], "system": ["M1", None, "", "M2"]}, {}),
    ({**BASE, "label": [0, 1, 1, 0], "model": [3, 4, None, 3]}, {"columns": {"system": "model"}}),
    ({**BASE, "label": ["yes", "no", "no", "yes"]}, {"label_map": {"YES": 1, "no": 0}}),
    ({**BASE, "label": [0, 1, 1, 0], "group": [7, None, 9, 7]}, {"construct": "entailment", "dataset": "named"}),
    ({"c": BASE["claim"], "e": BASE["evidence"], "y": [1, 0, 1, 0], "key": ["k1", "k2", "k3", "k4"]},
     {"columns": {"claim": "c", "evidence": "e", "label": "y", "id": "key"}}),
    ({**BASE, "label": pa.array([1, 0, 1, 0], pa.int8()), "id": pa.array(["a", "b", "c", "d"], pa.large_string())}, {}),
    ({**BASE, "claim": ["東京", "\u00a0é\u3000", "ü", "4"], "label": [0, 1, 1, 0]}, {}),  # text without ASCII
]


@pytest.mark.parametrize("data,kw", CASES)
def test_fast_path_equals_rows_to_records(data, kw):
    batch = pa.RecordBatch.from_pydict(data)
    seen: dict = {}
    fast = batch_to_table(batch, first_row=5, path="dir/file.parquet", seen_ids=seen, **kw)
    assert fast is not None, "a clean batch should not need the row path"
    assert_same(fast, per_row(batch, 5, **kw))
    assert seen == {i: ("dir/file.parquet", 5 + k) for k, i in enumerate(fast.ids)}


BAD = [
    {"claim": ["ok", ""]}, {"claim": ["ok", " \t"]}, {"claim": ["ok", "\u00a0\u3000"]}, {"claim": ["ok", "\x1c"]},
    {"claim": ["ok", None]}, {"evidence": [None, "e"]}, {"label": [1, 2]}, {"label": [1.0, float("nan")]},
    {"label": [1, None]}, {"label": ["attributable", "0"]}, {"id": ["same", "same"]}, {"claim": [1, 2]},
    {"label": [[1], [0]]}, {"dataset": [1, 2]}, {"inclusion_prob": [0.5, 1.0]},
]


@pytest.mark.parametrize("change", BAD)
def test_doubtful_batches_go_to_the_row_path(change):
    data = {"claim": ["a b", "c"], "evidence": ["e", "f"], "label": [1, 0], **change}
    seen = {"x": ("other", 1)}
    assert batch_to_table(pa.RecordBatch.from_pydict(data), first_row=1, path="p", seen_ids=seen) is None
    assert seen == {"x": ("other", 1)}  # nothing recorded for a batch it did not take


def test_id_seen_in_an_earlier_batch_is_left_to_the_row_path():
    batch = pa.RecordBatch.from_pydict({"claim": ["a"], "evidence": ["b"], "label": [1], "id": ["x"]})
    assert batch_to_table(batch, first_row=1, path="p", seen_ids={"x": ("q", 3)}) is None


def test_streamed_parquet_errors_still_name_file_row_and_field(tmp_path):
    path = tmp_path / "pairs.parquet"
    n = 100
    claims = [f"claim {i}" for i in range(n)]
    claims[57] = "   "
    labels = [i % 2 for i in range(n)]
    pq.write_table(pa.table({"claim": claims, "evidence": ["ev"] * n, "label": labels}), path)
    with pytest.raises(DataError) as err:
        list(iter_tables([path], chunk_rows=16))
    assert str(err.value) == f"{path}, row 58, field 'claim': claim is empty"
    origin: list = []
    tables = list(iter_tables([path], DataSpec(on_error="skip"), chunk_rows=16, origin=origin))
    assert sum(map(len, tables)) == n - 1 and origin[0].skipped == (
        SkippedRow(file=str(path), row=58, field="claim", reason="claim is empty"),)
    assert tables[0].ids[:2] == ["pairs:1", "pairs:2"] and tables[-1].ids[-1] == f"pairs:{n}"
