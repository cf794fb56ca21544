"""The streaming local engine scores exactly what the in-memory path scores, chunk by chunk."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from attrib_audit.cli import main
from attrib_audit.data import DataError, load_demo, load_pairs
from attrib_audit.data.origin import DataEntry, SkippedRow
from attrib_audit.data.sources import DataSpec
from attrib_audit.engine import ScoreCache, score_pairs
from attrib_audit.engine.stream import iter_tables, stream_score
from attrib_audit.scorers.lexical import LexicalScorer


@pytest.fixture(scope="module")
def demo_frame() -> pd.DataFrame:
    t = load_demo()
    return pd.DataFrame({"id": t.ids, "dataset": t.datasets, "claim": t.claims, "evidence": t.evidences,
                         "label": t.labels.astype(int), "group": t.groups})


@pytest.mark.parametrize("fmt", ["parquet", "jsonl", "csv"])
def test_stream_equals_in_memory_across_chunk_sizes(tmp_path, demo_frame, fmt):
    path = tmp_path / f"pairs.{fmt}"
    {"parquet": lambda: demo_frame.to_parquet(path, index=False),
     "jsonl": lambda: demo_frame.to_json(path, orient="records", lines=True, force_ascii=False),
     "csv": lambda: demo_frame.to_csv(path, index=False)}[fmt]()
    table = load_pairs([path])
    ref, _ = score_pairs(LexicalScorer(), table.claims, table.evidences)
    for chunk in (7, 128, 10_000):
        out = tmp_path / f"s{chunk}.parquet"
        with ScoreCache(tmp_path / f"c{chunk}.sqlite") as cache:
            res = stream_score([path], {"lexical": LexicalScorer()}, out, cache=cache, chunk_rows=chunk)
        got = pd.read_parquet(out)
        assert got["id"].tolist() == table.ids
        assert np.array_equal(got["lexical"].to_numpy(), ref.scores)
        assert res.n_rows == len(table) and res.n_chunks == -(-len(table) // chunk)
        assert res.stats[0].n_scored + res.stats[0].n_cached == res.stats[0].n_unique
        meta = json.loads(pq.read_metadata(out).metadata[b"attrib_audit"])
        assert meta["complete"] and meta["scorers"] == {"lexical": LexicalScorer().signature}
        assert meta["data"][0]["sha256"] == table.origin[0].sha256 and meta["data"][0]["rows"] == len(table)


def test_stream_rerun_is_all_cached_and_duplicate_ids_across_chunks_are_caught(tmp_path, demo_frame):
    path = tmp_path / "p.parquet"
    demo_frame.to_parquet(path, index=False)
    cache = tmp_path / "c.sqlite"
    for expect_scored in (400, 0):
        with ScoreCache(cache) as c:
            res = stream_score([path], {"lexical": LexicalScorer()}, tmp_path / "o.parquet", cache=c, chunk_rows=50)
        assert res.stats[0].n_scored == expect_scored
    dup = pd.concat([demo_frame, demo_frame.iloc[[3]]])
    dup.to_parquet(tmp_path / "dup.parquet", index=False)
    with pytest.raises(DataError, match=r"row 401.*duplicated id"):
        list(iter_tables([tmp_path / "dup.parquet"], chunk_rows=64))
    origin: list[DataEntry] = []
    tables = list(iter_tables([tmp_path / "dup.parquet"], DataSpec(on_error="skip"), chunk_rows=64, origin=origin))
    assert sum(map(len, tables)) == 400
    assert origin[0].skipped == (SkippedRow(file=str(tmp_path / "dup.parquet"), row=401, field="id",
                                            reason=f"duplicated id {demo_frame.id[3]!r} (first at "
                                                   f"{tmp_path / 'dup.parquet'} row 4)"),)


def test_stream_chunk_of_only_bad_rows_is_skipped_not_an_error(tmp_path):
    rows = [{"claim": "a b", "evidence": "b", "label": 1}] * 3 + [{"claim": " ", "evidence": "x", "label": 0}] * 5
    rows += [{"claim": "c", "evidence": "c d", "label": 0}]
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    origin: list[DataEntry] = []
    got = list(iter_tables([path], DataSpec(on_error="skip"), chunk_rows=3, origin=origin))
    assert [len(t) for t in got] == [3, 1] and len(origin[0].skipped) == 5
    with pytest.raises(DataError, match="row 4.*claim"):
        list(iter_tables([path], chunk_rows=3))


def test_score_cli_streams_and_records_skips(tmp_path, capsys):
    path = tmp_path / "p.jsonl"
    path.write_text('{"claim": "a", "evidence": "a b", "label": 1}\n{"claim": "", "evidence": "x", "label": 0}\n'
                    '{"claim": "c", "evidence": "c", "label": "maybe"}\n{"claim": "d", "evidence": "e", "label": 0}\n')
    out = tmp_path / "s.csv"
    assert main(["score", str(path), "--out", str(out), "--no-cache", "--chunk-rows", "2"]) == 2  # fail: row 2
    assert "row 2" in capsys.readouterr().err
    assert main(["score", str(path), "--out", str(out), "--no-cache", "--chunk-rows", "2", "--on-error", "skip"]) == 0
    frame = pd.read_csv(out)
    assert frame["id"].tolist() == ["p:1", "p:4"] and frame["lexical"].tolist() == [0.5, 0.0]
    prov = json.loads((tmp_path / "s.csv.provenance.json").read_text())
    assert [(s["row"], s["field"]) for s in prov["data"][0]["skipped"]] == [(2, "claim"), (3, "label")]
