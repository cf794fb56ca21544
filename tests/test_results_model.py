"""results.json has one model, one writer and one reader: `run_audit` returns the results whole (run spec and
reproduce command included, nothing patched on later), `to_json` writes them, `read_results` reads them back
byte for byte, and the sensitivity section gets its rescored scores handed in instead of scoring."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from attrib_audit.audit import AuditConfig, read_results, run_audit
from attrib_audit.audit.results import AurocRow, to_json
from attrib_audit.audit.run import run_spec
from attrib_audit.audit.sensitivity import WindowRescore, WindowScorer, sensitivity_section
from attrib_audit.audit.spec import Local, RunSpec, ScorerChoice, StatsSpec
from attrib_audit.data import DataSpec, FileSource, load_pairs
from attrib_audit.files.jsonfile import plain
from attrib_audit.files.records import to_record
from attrib_audit.scorers.base import ScoreBatch

KEYS = ["run_id", "tool", "config", "data", "skipped", "scorers", "unavailable", "precomputed", "slices", "auroc",
        "paired", "truncation", "failures", "transfer", "sensitivity", "elapsed_s"]


@pytest.fixture
def pairs(tmp_path):
    rng = np.random.default_rng(3)
    rows = []
    for d in ("d1", "d2", "d3"):
        for i in range(24):
            y = i % 2
            words = " ".join(rng.choice(["paris", "rome", "oslo", "bern", "lima", "cats"], 4))
            rows.append({"id": f"{d}-{i}", "dataset": d, "claim": words, "evidence": words if y else "dogs bark loudly",
                         "label": y, "construct": "attribution"})
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_run_spec_returns_the_results_whole_and_the_file_reads_back_byte_for_byte(pairs, tmp_path):
    spec = RunSpec(data=DataSpec(files=(FileSource(path=str(pairs)),)), scorers=(ScorerChoice("lexical"),),
                   stats=StatsSpec(n_boot=50, n_perm=50))
    command = ["attrib-audit", "audit", str(pairs), "--scorers", "lexical", "--out", "OUT"]
    result = run_spec(spec, Local(cache=":memory:", quiet=True), log=lambda _m: None, command=command)
    res = result.results
    record = to_record(res)
    assert list(record) == [*KEYS, "spec", "command"] and res.command == command
    assert res.spec is not None and res.spec.data.files[0].format == "pairs"
    assert len(res.spec.data.files[0].sha256 or "") == 64
    assert record == plain(record) and json.loads(json.dumps(record, allow_nan=False)) == record  # plain JSON values
    folder = tmp_path / "out"
    result.save(folder)
    text = (folder / "results.json").read_text()
    back = read_results(folder, "test")
    assert back == res and to_json(back) == text and back.auroc == res.auroc  # the very records run_audit returned
    row = back.auroc[0]
    assert isinstance(row, AurocRow) and row.chance is not None and row.note is None
    assert list(json.loads(text)["auroc"][0])[-3:] == ["p_chance", "p_chance_holm", "beats_chance"]


def test_run_audit_from_python_records_no_spec_or_command(pairs):
    res = run_audit(load_pairs(pairs), AuditConfig(scorers=("lexical",), n_boot=30, n_perm=30, cache_path=":memory:",
                                                   quiet=True), log=lambda _m: None).results
    assert list(to_record(res)) == KEYS and res.spec is None and res.command is None


def test_the_sensitivity_section_takes_rescored_scores_and_scores_nothing(pairs):
    result = run_audit(load_pairs(pairs), AuditConfig(scorers=("lexical",), n_boot=30, n_perm=30, cache_path=":memory:",
                                                      quiet=True), log=lambda _m: None)
    base = result.scores["lexical"]
    flipped = ScoreBatch(scores=1.0 - base.scores, truncated_tokens=base.truncated_tokens + 1,
                         input_tokens=base.input_tokens, chunks=base.chunks, failures=base.failures)
    window = WindowRescore(window=64, scores={"lexical": flipped},
                           scorers=[WindowScorer(scorer="lexical", window=128, window_alt=64,
                                                 signature_alt="lexical@64")], skipped=[], scoring=[])
    config = AuditConfig(n_boot=30, n_perm=30)
    assert result.results.transfer is not None
    sen = sensitivity_section(result.table, result.slice_keys, result.scores, result.boots, result.results.slices,
                              result.results.transfer, config, window)
    assert sen.window is not None
    rows = {r.slice: r for r in sen.window.rows}
    assert sorted(rows) == ["d1", "d2", "d3"] and sen.window.scoring == []
    for r in rows.values():  # reversed scores: AUROC at the window is 1 − AUROC, and every pair counts as cut
        assert r.auroc_alt == pytest.approx(1 - r.auroc)
        assert r.diff == pytest.approx(r.auroc_alt - r.auroc)
        assert r.pairs_truncated_alt == 24 and r.pairs_truncated == 0


def _dataframe_parquet(path, table, slice_keys, scores, run_id):
    """scores.parquet as it was first written, through a pandas DataFrame: the reference for the column types."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    from attrib_audit.audit.results import scores_columns

    frame = pd.DataFrame(scores_columns(table, slice_keys, scores))
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path)


def test_scores_parquet_has_the_columns_types_and_nulls_a_dataframe_gave(tmp_path):
    import pandas as pd
    import pyarrow.parquet as pq

    from attrib_audit.audit.results import write_scores_parquet
    from attrib_audit.data.records import PairTable
    from attrib_audit.files.outdir import PARQUET_RUN_KEY

    n = 6
    table = PairTable(ids=[f"i{i}" for i in range(n)], datasets=["d"] * n, claims=["c"] * n, evidences=["e"] * n,
                      labels=np.array([0, 1] * 3), sources=[None, "s", None, "s", "s", "s"], questions=[None] * n,
                      groups=[f"g{i}" for i in range(n)], constructs=[None] * n, inclusion_probs=np.full(n, 0.5),
                      systems=["a", None, "b", "a", "a", "b"])
    judge = ScoreBatch(scores=np.array([0.1, np.nan, 0.3, 0.4, np.nan, 1.0]), truncated_tokens=np.zeros(n, np.int64),
                       input_tokens=np.ones(n, np.int64), chunks=np.ones(n, np.int64),
                       failures=[None, "refused", None, None, "timeout", None],
                       extras={"label": ["yes", None, "no", "yes", None, "no"], "clamped": [True, False, None] * 2,
                               "n": [1, None, 3, 4, 5, 6], "p": [0.5, float("nan"), None, 1.0, 2.0, 3.0],
                               "k": list(range(n)), "none": [None] * n})
    scores = {"judge": judge, "lexical": ScoreBatch.plain(np.linspace(0, 1, n))}
    write_scores_parquet(tmp_path / "new.parquet", table, ["s"] * n, scores, run_id="run-1")
    _dataframe_parquet(tmp_path / "old.parquet", table, ["s"] * n, scores, run_id="run-1")
    new, old = pq.read_table(tmp_path / "new.parquet"), pq.read_table(tmp_path / "old.parquet")
    assert new.column_names == [
        "id", "dataset", "source", "group", "construct", "system", "slice", "label", "weight",
        "judge", "judge__truncated_tokens", "judge__chunks", "judge__failure", "judge__clamped", "judge__k",
        "judge__label", "judge__n", "judge__none", "judge__p",
        "lexical", "lexical__truncated_tokens", "lexical__chunks", "lexical__failure"]
    assert new.schema.remove_metadata() == old.schema.remove_metadata()
    assert new.equals(old)  # values and nulls, column by column
    assert new.schema.metadata == {PARQUET_RUN_KEY: b"run-1"}
    assert new.column("judge").null_count == 2 and new.column("judge__n").type == "double"
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "new.parquet"), pd.read_parquet(tmp_path / "old.parquet"))


@pytest.mark.parametrize("values", [
    np.array([0.5, np.nan, -0.0, np.inf, 1e-300]), np.array([1.5, 2.5], dtype=np.float32), np.array([], dtype=float),
    np.array([3, -1, 2**40]), np.array([7, 8], dtype=np.int32), np.array([True, False, True] * 5),
    ["a", None, "", "naïve ✂ 𝔘", None], ["only"], [None, None], [], ["x"] * 17,
])
def test_columns_laid_into_buffers_equal_what_pa_array_gives(values):
    """Numbers and text columns skip pa.array (it imports pandas): the arrays must be the same, nulls included."""
    import pyarrow as pa

    from attrib_audit.audit.results import _arrow_column, _buffers_column

    direct = _buffers_column(pa, values)
    assert direct is not None
    direct.validate(full=True)
    want = pa.array(values, from_pandas=True)
    want = want.cast(pa.large_string()) if pa.types.is_string(want.type) else want
    assert direct.type == want.type and direct.null_count == want.null_count and direct.equals(want)
    assert _arrow_column(pa, values).equals(want)


def test_saving_scores_imports_no_pandas(tmp_path):
    """scores.parquet of plain scorers is written from arrow buffers: a cached rerun does not pay pandas' import."""
    code = ("import sys, numpy as np; from pathlib import Path; "
            "from attrib_audit.audit.results import write_scores_parquet; from attrib_audit.data.records "
            "import PairTable; "
            "from attrib_audit.scorers.base import ScoreBatch; n = 4; "
            "t = PairTable(ids=['a','b','c','d'], datasets=['d']*n, claims=['c']*n, evidences=['e']*n, "
            "labels=np.array([0,1,0,1]), sources=[None,'s','s','s'], questions=[None]*n, groups=list('abcd'), "
            "constructs=[None]*n); "
            "write_scores_parquet(Path(sys.argv[1]), t, ['s']*n, {'x': ScoreBatch.plain(np.array([0.1, 0.2, "
            "0.3, 1.0]))}); "
            "print('pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "s.parquet")], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "False" and (tmp_path / "s.parquet").stat().st_size > 0
