"""The Ray Data engine gives the local engine's scores, and both engines share one cache."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import ray  # noqa: F401 - the dev extra installs ray: a missing one is a failure, not a skip

from attrib_audit.audit import AuditConfig, run_audit
from attrib_audit.cli import main
from attrib_audit.data import load_demo
from attrib_audit.engine.ray_engine import RayOptions, init_ray
from attrib_audit.engine.table import build_scorers, score_table


@pytest.fixture(scope="module")
def ray_local():
    init_ray(None, num_cpus=2)
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def demo():
    t = load_demo()
    # duplicate some pairs so dedupe across Ray blocks is exercised
    return t.concat([t, t.take(np.arange(0, 400, 7))])


def _same(a, b) -> None:
    assert np.array_equal(a.scores, b.scores)
    assert np.array_equal(a.truncated_tokens, b.truncated_tokens)
    assert np.array_equal(a.chunks, b.chunks)
    assert a.failures == b.failures


def test_ray_matches_local_and_reruns_score_nothing_anew(ray_local, demo, tmp_path):
    opts = RayOptions(concurrency=2, block_rows=64)  # several blocks, two actors
    local = AuditConfig(scorers=("lexical",), cache_path=str(tmp_path / "local.sqlite"), quiet=True)
    ray_cfg = AuditConfig(scorers=("lexical",), cache_path=str(tmp_path / "ray.sqlite"), quiet=True,
                          engine="ray", ray=opts)
    scorers, _ = build_scorers(local)
    ref, ref_stats = score_table(demo, scorers, local)
    got, stats = score_table(demo, scorers, ray_cfg)
    _same(ref["lexical"], got["lexical"])
    assert stats[0].n_pairs == ref_stats[0].n_pairs == len(demo)
    assert stats[0].n_unique == ref_stats[0].n_unique == 400
    assert stats[0].n_scored == 400 and stats[0].n_cached == 0
    # the Ray actors wrote their scores to the cache: a local rerun on it scores nothing anew
    rerun_local, st = score_table(demo, scorers, AuditConfig(scorers=("lexical",), cache_path=ray_cfg.cache_path))
    _same(ref["lexical"], rerun_local["lexical"])
    assert st[0].n_scored == 0 and st[0].n_cached == 400
    # and a Ray run on the local engine's cache scores nothing anew either
    ray_on_local = AuditConfig(scorers=("lexical",), cache_path=local.cache_path, engine="ray", ray=opts)
    again, st = score_table(demo, scorers, ray_on_local)
    _same(ref["lexical"], again["lexical"])
    assert st[0].n_scored == 0 and st[0].n_cached == 400


def test_ray_audit_and_score_cli_match_local(ray_local, tmp_path):
    demo = load_demo()
    cfg = dict(scorers=("lexical",), n_boot=200, quiet=True)
    a = run_audit(demo, AuditConfig(**cfg, cache_path=":memory:"), log=lambda *_: None).results
    b = run_audit(demo, AuditConfig(**cfg, cache_path=str(tmp_path / "c.sqlite"), engine="ray"),
                  log=lambda *_: None).results
    assert a.auroc == b.auroc and a.paired == b.paired

    src = demo.origin[1].path
    assert main(["score", src, "--out", str(tmp_path / "l.parquet"), "--no-cache", "--quiet"]) == 0
    assert main(["score", src, "--out", str(tmp_path / "r.parquet"), "--cache", str(tmp_path / "c2.sqlite"),
                 "--engine", "ray", "--concurrency", "1", "--quiet"]) == 0
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "l.parquet"), pd.read_parquet(tmp_path / "r.parquet"))


def test_ray_model_scorer_matches_local(ray_local, minilm_path, tmp_path):
    demo = load_demo().take(np.arange(0, 400, 20))
    local = AuditConfig(scorers=("minilm",), cache_path=":memory:", quiet=True)
    scorers, unavailable = build_scorers(local)
    assert unavailable == []  # MiniLM is a core dependency (the fixture fails without it)
    ref, _ = score_table(demo, scorers, local)
    got, st = score_table(demo, scorers, AuditConfig(scorers=("minilm",), cache_path=str(tmp_path / "c.sqlite"),
                                                     engine="ray", ray=RayOptions(concurrency=1, block_rows=16)))
    np.testing.assert_allclose(got["minilm"].scores, ref["minilm"].scores, rtol=0, atol=1e-6)
    assert np.array_equal(got["minilm"].truncated_tokens, ref["minilm"].truncated_tokens)
    assert st[0].n_scored == len(demo)


def _keys(path) -> set[tuple[str, str]]:
    import sqlite3

    with sqlite3.connect(path) as db:
        return set(db.execute("SELECT signature, key FROM scores"))


def test_ray_passes_questions_so_judge_scores_and_cache_keys_match_local(ray_local, tmp_path):
    from judge_servers import RuleServer

    demo = load_demo().take(np.arange(0, 200, 10))  # attributionbench rows: each has a question
    assert all(demo.questions)
    with RuleServer(delay_s=0) as server:
        def config(engine: str) -> AuditConfig:
            opts = {"url": server.url, "model": "m", "request_cache": str(tmp_path / f"{engine}.requests.sqlite")}
            return AuditConfig(scorers=("lexical", "judge"), cache_path=str(tmp_path / f"{engine}.sqlite"), quiet=True,
                               scorer_options={"judge": opts}, engine=engine,
                               ray=RayOptions(concurrency=1, block_rows=8) if engine == "ray" else None)
        local = config("local")
        scorers, _ = build_scorers(local)
        ref, _ = score_table(demo, scorers, local)
        got, stats = score_table(demo, scorers, config("ray"))
    _same(ref["judge"], got["judge"])
    _same(ref["lexical"], got["lexical"])
    assert ref["judge"].extras["raw"] == got["judge"].extras["raw"]
    # the rule server adds 0.05 when the prompt holds a question: the Ray prompts held it too
    assert sum(server.hits.values()) == 2 * len(demo) and stats[1].n_scored == len(demo)
    assert _keys(tmp_path / "local.sqlite") == _keys(tmp_path / "ray.sqlite")
    import sqlite3

    req = [set(sqlite3.connect(tmp_path / f"{e}.requests.sqlite").execute("SELECT key FROM replies"))
           for e in ("local", "ray")]
    assert req[0] == req[1] and len(req[0]) == len(demo)


def test_ray_judge_server_down_is_exit_3_in_one_line(ray_local, tmp_path, capsys):
    from judge_servers import free_port

    data = tmp_path / "pairs.jsonl"
    data.write_text("\n".join(json.dumps({k: v for k, v in r.__dict__.items() if v is not None})
                               for r in load_demo().take(np.arange(0, 40, 10)).records()))
    rc = main(["audit", str(data), "--scorers", "lexical,judge", "--judge-url", f"http://127.0.0.1:{free_port()}/v1",
               "--judge-model", "m", "--judge-retries", "0", "--judge-timeout", "5", "--engine", "ray",
               "--concurrency", "1", "--cache", str(tmp_path / "c.sqlite"), "--out", str(tmp_path / "o"), "--quiet",
               "--n-boot", "20", "--n-perm", "20"])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert rc == 3 and err.startswith("attrib-audit: backend error: judge server") and "on a Ray actor" in err
    assert "Traceback" not in err and not (tmp_path / "o").exists()
