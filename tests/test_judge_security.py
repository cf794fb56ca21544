"""Judge HTTP against stub servers on 127.0.0.1: redirects refused, credentials never recorded, replies scrubbed,
and a judge that fails mid-audit is one line, exit 3, with the finished scores kept in the cache."""
from __future__ import annotations

import base64
import json
import warnings

import pytest

from attrib_audit.cli import main
from attrib_audit.engine import ScoreCache
from attrib_audit.scorers.judge.backends import Decoding, OpenAIChatBackend
from attrib_audit.scorers.judge.http import public_url
from attrib_audit.scorers.lexical import LexicalScorer
from judge_servers import ScriptedServer, chat_reply, free_port

ROWS = [("Paris is in France", "Paris is in France.", 1), ("Rome is in Italy", "Rome is in Italy.", 1),
        ("Oslo is in Peru", "Lima is in Peru.", 0), ("Cats bark", "Dogs bark.", 0)]


@pytest.fixture
def data(tmp_path):
    p = tmp_path / "pairs.jsonl"
    p.write_text("\n".join(json.dumps({"id": f"r{i}", "dataset": "toy", "claim": c, "evidence": e, "label": y})
                           for i, (c, e, y) in enumerate(ROWS)))
    return p


def _audit(data, tmp_path, url, *extra):
    return main(["audit", str(data), "--scorers", "lexical,judge", "--judge-url", url, "--judge-model", "m",
                 "--judge-retries", "0", "--judge-timeout", "5", "--cache", str(tmp_path / "c" / "s.sqlite"),
                 "--out", str(tmp_path / "out"), "--n-boot", "50", "--n-perm", "50", "--quiet", *extra])


def _err_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err, err
    return err


@pytest.mark.parametrize("status", [301, 302, 307, 308])
def test_redirect_is_a_failure_and_nothing_reaches_the_target(data, tmp_path, capsys, monkeypatch, status):
    monkeypatch.setenv("ATTRIB_AUDIT_JUDGE_API_KEY", "sk-secret-123")
    with ScriptedServer(lambda *_: chat_reply("SUPPORT: 1")) as target:
        with ScriptedServer(lambda m, path,
                            h: (status, "moved", {"Location": f"{target.url}/chat/completions"})) as src:
            rc = _audit(data, tmp_path, src.url)
        assert target.requests == []  # neither the key nor the data went to the redirect target
        assert src.requests and all(r["method"] == "POST" for r in src.requests)
    err = _err_line(capsys)
    assert rc == 3 and f"HTTP {status}" in err and f"{target.url}/chat/completions" in err and "not followed" in err
    from attrib_audit.scorers.judge.requests_cache import RequestCache

    cache = RequestCache(tmp_path / "c" / "s.judge-requests.sqlite")
    assert cache.count() == 0  # the redirect is not cached as a judgement
    cache.close()
    assert not (tmp_path / "out").exists()


def test_credentials_in_the_url_are_used_but_never_recorded(data, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("ATTRIB_AUDIT_JUDGE_API_KEY", raising=False)
    with ScriptedServer(lambda *_: chat_reply("SUPPORT: 0.9")) as srv:
        url = f"http://alice:pa55w0rd@127.0.0.1:{srv.port}/v1?api-key=K3Yvalue&token=T0Kvalue&deployment=d1"
        rc = _audit(data, tmp_path, url, "--report")
        out = capsys.readouterr()
    assert rc == 0, out.err
    seen = srv.requests[0]
    assert seen["headers"]["Authorization"] == "Basic " + base64.b64encode(b"alice:pa55w0rd").decode()
    assert "api-key=K3Yvalue" in seen["path"] and "deployment=d1" in seen["path"]  # the request keeps them
    files = [p for p in (tmp_path / "out").rglob("*") if p.is_file()] + list((tmp_path / "c").iterdir())
    assert any(p.name == "report.md" for p in files) and any("judge-requests" in p.name for p in files)
    for secret in ("pa55w0rd", "K3Yvalue", "T0Kvalue", "alice"):
        assert secret not in out.out + out.err
        for p in files:
            assert secret.encode() not in p.read_bytes(), (secret, p)
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["config"]["scorer_options"]["judge"]["url"] == f"http://127.0.0.1:{srv.port}/v1?deployment=d1"
    assert f"--judge-url http://127.0.0.1:{srv.port}/v1?deployment=d1" in " ".join(results["command"])


def test_rejected_key_is_one_line_exit_3_scrubbed_and_keeps_finished_scores(data, tmp_path, capsys, monkeypatch):
    key = "sk-live-" + "9" * 20
    monkeypatch.setenv("ATTRIB_AUDIT_JUDGE_API_KEY", key)
    echo = lambda m, p, h: (401, f"invalid api key {h.get('Authorization')} " + "x" * 5000, {})  # noqa: E731
    with ScriptedServer(echo) as srv:
        rc = _audit(data, tmp_path, srv.url)
    err = _err_line(capsys)
    assert rc == 3 and "HTTP 401" in err and key not in err and "***" in err and len(err) < 1200
    assert "lexical (4 pairs) finished" in err and "rerun the same command to resume" in err
    with ScoreCache(tmp_path / "c" / "s.sqlite") as cache:  # the lexical scores are really there
        assert cache.count(LexicalScorer().signature) == 4


def test_server_down_is_exit_3_with_what_was_kept(data, tmp_path, capsys):
    rc = _audit(data, tmp_path, f"http://127.0.0.1:{free_port()}/v1")
    err = _err_line(capsys)
    assert rc == 3 and err.startswith("attrib-audit: backend error: judge server") and "failed after 1 attempts" in err
    assert "kept in the score cache" in err and "0 judge scores" in err


@pytest.mark.parametrize("url", ["http://user:pw0rd@127.0.0.1:notaport/v1", "ftp://user:pw0rd@127.0.0.1/v1",
                                 "http://user:pw0rd@/v1"])
def test_malformed_url_with_credentials_is_one_line_without_the_password(data, tmp_path, capsys, url):
    assert _audit(data, tmp_path, url) == 2
    err = _err_line(capsys)
    assert "--judge-url" in err and "pw0rd" not in err


def test_key_over_plain_http_to_another_host_warns_once(monkeypatch):
    monkeypatch.setenv("TEST_JUDGE_KEY", "k")
    make = lambda url, env="TEST_JUDGE_KEY": OpenAIChatBackend(url, "m", Decoding(), api_key_env=env)  # noqa: E731
    with pytest.warns(RuntimeWarning, match="plain http to judge.example.internal"):
        make("http://judge.example.internal:8000/v1")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        make("http://judge.example.internal:8000/v1")  # once per endpoint
        make("https://judge.example.org/v1")  # encrypted
        make("http://127.0.0.1:8000/v1")  # loopback
        make("http://[::1]:8000/v1")
        make("http://localhost:8000/v1")
        make("http://judge2.example.internal/v1", env="UNSET_VARIABLE_FOR_TEST")  # no key is sent


def test_public_url_strips_every_credential_form():
    assert public_url("https://u:p@h.example:8443/v1/?api_key=a&key=b&Token=c&x-api-key=d&model=m#frag") == \
        "https://h.example:8443/v1/?model=m"
    assert public_url("http://:p@[::1]:80/v1?sig=s") == "http://[::1]:80/v1"
    assert public_url("http://user:pw@host:bad/v1") == "http://host:bad/v1"


def test_a_key_the_server_echoes_in_a_reply_is_not_stored(data, tmp_path, capsys, monkeypatch):
    key = "sk-echo-" + "7" * 16
    monkeypatch.setenv("ATTRIB_AUDIT_JUDGE_API_KEY", key)
    with ScriptedServer(lambda m, p, h: (200, f"<html>proxy saw {h.get('Authorization')}</html>", {})) as srv:
        assert _audit(data, tmp_path, srv.url, "--report") == 0
    capsys.readouterr()
    files = [p for p in (tmp_path / "out").rglob("*") if p.is_file()] + list((tmp_path / "c").iterdir())
    assert all(key.encode() not in p.read_bytes() for p in files)
    import pandas as pd

    raw = pd.read_parquet(tmp_path / "out" / "scores.parquet")["judge__raw"]
    assert (raw == "<html>proxy saw ***</html>").all()  # the reply is kept, the key is not
