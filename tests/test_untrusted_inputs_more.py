"""More untrusted-input reproductions: a crafted results.json, run spec, plugin, label-server request or edited
report cell each ended in a traceback (or a dropped connection); each now gives one line (or a 4xx JSON reply)."""
from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attrib_audit.cli import main
from attrib_audit.data.demo import demo_paths
from test_cli_fuzz import JSON_VALUE, run

FAST = ["--scorers", "lexical", "--n-boot", "20", "--n-perm", "20", "--no-cache", "--quiet"]


def one_line(code: int, err: str) -> str:
    """The single stderr line of a refused command."""
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, (code, err)
    return err.strip()


@pytest.fixture(scope="module")
def audited(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("audited") / "out"
    code, err = run(["audit", str(demo_paths()[0]), *FAST, "--out", str(out)])
    assert code == 0, err
    return out


# ---- 1: a results.json that is not UTF-8, or holds an escaped lone surrogate --------------------------------------

@pytest.mark.parametrize("edit", ["not utf-8", "lone surrogate", "surrogate key"])
@pytest.mark.parametrize("command", ["report", "select", "plan", "check"])
def test_results_json_that_is_not_utf8_text_is_one_line(audited, tmp_path, edit, command):
    """`"\\udc80"` parsed fine and `report` died writing it (UnicodeEncodeError); bytes 0xff died reading."""
    d = tmp_path / "res"
    shutil.copytree(audited, d)
    raw = (d / "results.json").read_bytes()
    new = {"not utf-8": raw.replace(b'"attrib-audit"', b'"attrib-audit\xff"', 1),
           "lone surrogate": raw.replace(b'"attrib-audit"', b'"attrib-audit\\udc80"', 1),
           "surrogate key": raw.replace(b'"tool": {', b'"tool": {"\\ud800x": 1, ', 1)}[edit]
    assert new != raw
    (d / "results.json").write_bytes(new)
    argv = {"report": ["report", str(d)], "select": ["select", "--results", str(d)],
            "plan": ["plan", "--results", str(d), "--half-width", "0.05"],
            "check": ["audit", "--check", str(d), "--no-cache", "--quiet"]}[command]
    err = one_line(*run(argv))
    assert str(d / "results.json") in err
    if edit != "not utf-8":
        assert "lone surrogate" in err and ("field 'tool.name'" in err or "field 'tool.\\ud800x'" in err)


# ---- 2: a run spec (--config, or results.json's spec for --check) with wrongly typed values -------------------------

@pytest.mark.parametrize("edit, message", [
    ({"precomputed": "m"}, "precomputed: expected a list, got str"),
    ({"precomputed": [1, 2]}, "precomputed[0]: expected an object, got int"),
    ({"precomputed": [{"name": 3, "column": "x"}]}, "precomputed.name: expected a string, got 3"),
    ({"precomputed": [{"name": "m", "column": ["x"]}]}, "precomputed.column: expected a string, got ['x']"),
    ({"precomputed": [{"name": "m", "column": "x", "lower": "yes"}]}, "precomputed.lower: expected true or false"),
    ({"data": {"construct": 5}}, "data.construct: expected a string, got 5"),
    ({"data": {"construct": [1, 2]}}, "data.construct: expected a string, got [1, 2]"),
    ({"data": {"construct": {"a": 1}}}, "data.construct: expected a string, got {'a': 1}"),
    ({"data": {"dataset": [1]}}, "data.dataset: expected a string, got [1]"),
    ({"data": {"format": ["pairs"]}}, "data.format: expected a string"),
    ({"data": {"columns": [1]}}, "data.columns: expected an object, got [1]"),
    ({"data": {"label_map": ["yes"]}}, "data.label_map: expected an object"),
    ({"scorers": [{"name": "lexical", "options": [1]}]}, "scorers.lexical.options: expected an object, got [1]"),
    ({"scorers": [{"name": ["lexical"]}]}, "scorers.name: expected a scorer name"),
])
def test_wrongly_typed_spec_values_are_one_line_naming_file_and_key(tmp_path, edit, message):
    """`data.construct: 5` ended in AttributeError ('int' object has no attribute 'startswith'), a list in
    TypeError (unhashable), `precomputed[0].name: 3` ran on; each is now the file and the key."""
    spec = {"data": {"files": [{"path": str(demo_paths()[0])}]}, "scorers": [{"name": "lexical"}],
            "stats": {"n_boot": 20, "n_perm": 20}}
    spec = {**spec, **edit, "data": {**spec["data"], **edit.get("data", {})}}
    cfg = tmp_path / "spec.json"
    cfg.write_text(json.dumps(spec))
    err = one_line(*run(["audit", "--config", str(cfg), "--out", str(tmp_path / "o"), "--no-cache", "--quiet"]))
    assert f"{cfg}: {message}" in err, err  # the key after the file's name, not glued on (`spec.json.precomputed`)
    assert not (tmp_path / "o").exists()


def test_wrongly_typed_spec_in_a_results_json_is_one_line_for_check(audited, tmp_path):
    d = tmp_path / "res"
    shutil.copytree(audited, d)
    res = json.loads((d / "results.json").read_text())
    res["spec"]["data"]["construct"] = [1]
    (d / "results.json").write_text(json.dumps(res))
    err = one_line(*run(["audit", "--check", str(d), "--no-cache", "--quiet"]))
    assert str(d / "results.json") in err and "data.construct: expected a string, got [1]" in err


@pytest.mark.parametrize("text, message", [
    ('{"data": {"files": [{"path": "x\\udc80.jsonl"}]}, "scorers": [{"name": "lexical"}]}',
     "field 'data.files[0].path': holds an escaped lone surrogate"),
    ('{"data": ' + "[" * 100_000, "nested too deeply"),
])
def test_config_file_that_is_not_utf8_text_is_one_line(tmp_path, text, message):
    cfg = tmp_path / "spec.json"
    cfg.write_text(text)
    err = one_line(*run(["audit", "--config", str(cfg), "--out", str(tmp_path / "o"), "--no-cache", "--quiet"]))
    assert str(cfg) in err and message in err, err


# ---- 3: a plugin scorer that answers wrongly or raises --------------------------------------------------------------

PLUGIN = '''
import numpy as np
from attrib_audit.scorers import ScoreBatch


class Evil:
    name = "evil"

    def __init__(self, mode):
        self.mode = mode
        if mode == "name None":
            self.name = None

    @property
    def signature(self):
        if self.mode == "signature raises":
            raise KeyError("no revision pinned")
        return None if self.mode == "signature None" else "evil:v1"

    def score(self, claims, evidences):
        n, m = len(claims), self.mode
        if m == "raise":
            raise ValueError("model exploded\\nsecond line")
        if m in ("a list", "None", "a dict"):
            return {"a list": [0.5] * n, "None": None, "a dict": {"scores": [0.5] * n}}[m]
        scores = {"wrong count": [0.5] * (n + 1), "list of lists": [[0.5]] * n, "infinite": [float("inf")] * n,
                  "minus infinite": [0.5] * (n - 1) + [-float("inf")],
                  "NaN without a reason": [float("nan")] * n}.get(m)
        batch = ScoreBatch.plain([0.5] * n if scores is None else scores)
        if m == "strings":
            batch.scores = np.array(["0.5"] * n)
        if m == "NaN set afterwards":
            batch.scores[:] = np.nan
        if m == "failures not text":
            batch.failures = [1] * n
        return batch


def make(mode="ok"):
    return Evil(mode)
'''


@pytest.fixture
def evil_plugin(tmp_path, monkeypatch) -> str:
    (tmp_path / "evil_plugin_mod.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(__import__("sys").modules, "evil_plugin_mod", raising=False)
    return "evil_plugin_mod:make"


@pytest.mark.parametrize("mode, message", [
    ("a list", "score() returned a list, not a ScoreBatch"),
    ("None", "score() returned a NoneType, not a ScoreBatch"),
    ("a dict", "score() returned a dict, not a ScoreBatch"),
    ("wrong count", "scores for"),
    ("list of lists", "and shape ("),
    ("strings", "not one number per pair"),
    ("NaN without a reason", "score() failed: ValueError: ScoreBatch has"),
    ("NaN set afterwards", "NaN scores without a failure reason"),
    ("failures not text", "failures that are not a list of reasons"),
    ("infinite", "score() returned inf for pair 1"),
    ("minus infinite", "score() returned -inf for pair"),
    ("signature None", "its signature is None, not a non-empty string"),
    ("signature raises", "reading its name or signature failed: KeyError: 'no revision pinned'"),
    ("name None", "its name is None, not a non-empty string"),
    ("raise", "score() failed: ValueError: model exploded"),
])
def test_plugin_that_answers_wrongly_is_one_line_naming_it(evil_plugin, tmp_path, mode, message):
    """A wrong count was a RuntimeError traceback, a list of lists or None an AttributeError/TypeError one, and
    ±inf went into the AUROC as a number; each now stops the run in one line naming the plugin."""
    code, err = run(["audit", str(demo_paths()[0]), *FAST, "--scorers", f"lexical,{evil_plugin}",
                     "--scorer-opt", f"{evil_plugin}.mode={mode}", "--out", str(tmp_path / "o")])
    err = one_line(code, err)
    assert err.startswith(f"attrib-audit: plugin '{evil_plugin}': ") and message in err, err
    assert "second line" not in err and not (tmp_path / "o").exists()


def test_a_plugin_that_answers_well_still_audits(evil_plugin, tmp_path):
    assert run(["audit", str(demo_paths()[0]), *FAST, "--scorers", f"lexical,{evil_plugin}",
                "--out", str(tmp_path / "o")]) == (0, "")
    res = json.loads((tmp_path / "o" / "results.json").read_text())
    assert {s["scorer"] for s in res["scorers"]} == {"lexical", evil_plugin}


FLOATS = st.floats(allow_nan=True, allow_infinity=True) | st.integers(-10**30,
                                                                      10**30) | st.booleans() | st.text(max_size=3)


@settings(max_examples=200, deadline=None)
@given(st.one_of(JSON_VALUE, st.lists(FLOATS, max_size=6), st.lists(st.lists(FLOATS, max_size=2), max_size=6)),
       st.lists(st.none() | st.text(max_size=3) | st.integers(), max_size=6), st.integers(0, 6), st.booleans())
def test_any_plugin_answer_is_a_checked_batch_or_a_plugin_error(scores, failures, n, wrap):
    """Whatever score() hands back (wrapped in a ScoreBatch or not): either n scores, each finite or NaN with a
    reason, or PluginError naming the plugin; never another exception and never an infinity or a bare NaN."""
    from attrib_audit.scorers.base import ScoreBatch
    from attrib_audit.scorers.plugins import CheckedPlugin, PluginError

    class Answers:
        name, signature = "fuzz", "fuzz:v1"

        def score(self, claims, evidences):
            if not wrap:
                return scores
            batch = ScoreBatch.plain([0.0] * n)
            batch.scores, batch.failures = scores, failures
            return batch

    plugin = CheckedPlugin(Answers(), "fuzzmod:make")
    try:
        batch = plugin.score(["c"] * n, ["e"] * n)
    except PluginError as exc:
        assert str(exc).startswith("plugin 'fuzzmod:make': ") and "\n" not in str(exc)
        return
    assert isinstance(batch, ScoreBatch) and len(batch) == n and batch.scores.dtype == np.float64
    assert not np.isinf(batch.scores).any()
    assert all(f is not None for s, f in zip(batch.scores, batch.failures) if np.isnan(s))


# ---- 4: the label server: bodies that are not what the page sends, a burst of posts, a store that is not SQLite -----

@pytest.fixture(scope="module")
def label_server(tmp_path_factory):
    """`attrib-audit label`'s server on a free port, in a thread, over 20 pairs `sample` chose."""
    import threading

    from attrib_audit.validate.label import serve

    pool = tmp_path_factory.mktemp("label") / "pool.jsonl"
    code, err = run(["sample", str(demo_paths()[0]), "--n", "20", "--strategy", "stratified", "--scorers", "lexical",
                     "--no-cache", "--quiet", "--out", str(pool)])
    assert code == 0, err
    server = serve(pool, "alice", port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def post(server, body: bytes, length: str | None = None) -> tuple[int, dict]:
    """One POST /api/label with the page's token; (status, parsed JSON reply). A dropped connection raises."""
    import http.client

    con = http.client.HTTPConnection("127.0.0.1", server.server_port, timeout=30)
    try:
        con.putrequest("POST", "/api/label", skip_host=True, skip_accept_encoding=True)
        for key, value in (("Host", f"127.0.0.1:{server.server_port}"), ("X-Token", server.token),
                           ("Content-Type", "application/json"), ("Content-Length", length or str(len(body)))):
            con.putheader(key, value)
        con.endheaders()
        con.send(body)
        reply = con.getresponse()
        return reply.status, json.loads(reply.read())
    finally:
        con.close()


def a_label(server, i: int = 0, **over) -> dict:
    return {"annotator": "alice", "index": i, "id": server.pool.ids[i], "decision": "supported", **over}


@pytest.mark.parametrize("body, error", [
    (b"[1, 2]", "the body must be a JSON object"), (b"3", "the body must be a JSON object"),
    (b'"x"', "the body must be a JSON object"), (b"{nope", "Expecting property name"),
    (b'{"a": "\xff"}', "can't decode byte 0xff"), (b"[" * 15_000, "recursion"),
    ({"index": 10**30}, "index and id do not name the same pair"), ({"index": -1}, "do not name the same pair"),
    ({"index": 1.0}, "index must be an integer"), ({"index": "0"}, "index must be an integer"),
    ({"annotator": ["alice"]}, "annotator must be"), ({"decision": ["supported"]}, "POST /api/label with decision"),
    ({"decision": {}}, "POST /api/label with decision"), ({"seen": [1]}, "seen must be"),
])
def test_label_server_answers_a_bad_body_with_a_4xx_and_keeps_serving(label_server, body, error):
    """An annotator that is a list dropped the connection (AttributeError in the handler thread); a decision that is
    a list answered "unhashable type"; a `seen` list was taken as a clash."""
    raw = body if isinstance(body, bytes) else json.dumps(a_label(label_server, **body)).encode()
    code, reply = post(label_server, raw)
    assert code == 400 and error in reply["error"], (code, reply)
    assert post(label_server, json.dumps(a_label(label_server, 1)).encode())[0] == 200


@pytest.mark.parametrize("length, error", [("-5", "Content-Length must be a whole number"),
                                           ("abc", "Content-Length must be a whole number"),
                                           ("9" * 5000, "body missing or too large"),
                                           ("99999999999", "body missing or too large")])
def test_label_server_refuses_a_bad_content_length(label_server, length, error):
    code, reply = post(label_server, b"{}", length=length)
    assert code == 400 and error in reply["error"], reply


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(JSON_VALUE, st.dictionaries(st.sampled_from(["annotator", "index", "id", "decision", "seen"]),
                                             JSON_VALUE, max_size=5)), st.booleans())
def test_label_server_answers_any_json_body(label_server, value, raw):
    """Whatever JSON a request carries: a JSON reply with a status the page knows, never a dropped connection."""
    body = json.dumps(value if raw or not isinstance(value, dict) else {**a_label(label_server), **value})
    code, reply = post(label_server, body.encode())
    assert code in (200, 400, 409) and isinstance(reply, dict)


def test_label_server_takes_70_concurrent_posts(label_server):
    """With the stdlib's listen backlog of 5, a burst of posts that arrived before the server accepted any was
    refused: 70 connections are opened while it is not accepting yet, then each posts a label over its own."""
    import http.client
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from attrib_audit.validate.label import serve

    server = serve(label_server.pool.path, "alice", port=0)
    n = len(server.pool.ids)
    cons = [http.client.HTTPConnection("127.0.0.1", server.server_port, timeout=3) for _ in range(70)]

    def label(i: int) -> int:
        body = json.dumps(a_label(server, i % n, annotator=f"burst{i}")).encode()
        cons[i].request("POST", "/api/label", body, {"Host": f"127.0.0.1:{server.server_port}",
                                                      "X-Token": server.token, "Content-Type": "application/json"})
        return cons[i].getresponse().status

    try:
        with ThreadPoolExecutor(70) as pool:
            list(pool.map(lambda c: c.connect(), cons))  # a connect over the backlog times out here
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            with ThreadPoolExecutor(70) as pool:
                assert list(pool.map(label, range(70))) == [200] * 70
        finally:
            server.shutdown()  # only once serving: shutdown() waits for serve_forever to return
    finally:
        for con in cons:
            con.close()
        server.server_close()


def test_a_label_whose_precondition_failed_is_a_409_and_stores_nothing(label_server):
    """Item 7: a tab that showed a label the store does not hold (deleted, another store) got 200 "saved" while
    nothing was stored; the reply now says so and the store stays empty for that annotator."""
    body = a_label(label_server, 5, annotator="precondition", decision="not_supported", seen="supported")
    code, reply = post(label_server, json.dumps(body).encode())
    assert code == 409 and reply["stored"] is None and "nothing saved" in reply["error"], reply
    assert label_server.store.decisions("precondition") == {}


def test_labels_of_a_pool_without_ids_follow_their_pairs_when_a_row_is_inserted(tmp_path):
    """Item 7: a pool without ids was keyed by row position, so a row inserted on top moved every label onto
    another pair; ids are now a hash of the pair, so the export gives each pair its own label."""
    from attrib_audit.validate.sample import read_pool
    from attrib_audit.validate.store import LabelStore, store_path

    rows = [json.loads(line) for line in demo_paths()[0].read_text().splitlines()[:6]]
    pairs = [{"claim": r["claim"], "evidence": r["evidence"], "dataset": r["dataset"]} for r in rows]
    pool = tmp_path / "pool.jsonl"
    pool.write_text("".join(json.dumps(p) + "\n" for p in pairs))
    store = LabelStore(store_path(pool))
    for i, pid in enumerate(read_pool(pool).ids):
        store.put("al", pid, "supported" if i % 2 else "not_supported")
    pool.write_text("".join(json.dumps(p) + "\n" for p in [{"claim": "Inserted.", "evidence": "A new row."}, *pairs]))
    code, err = run(["label", str(pool), "--export", str(tmp_path / "out.jsonl")])
    assert code == 0, err
    out = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [(o["claim"], o["label"]) for o in out] == [(p["claim"], i % 2) for i, p in enumerate(pairs)]


def test_label_server_closes_a_connection_whose_body_stops_short(label_server):
    """A client declaring Content-Length 100 and sending 10 bytes held a handler thread forever (no read timeout):
    the server keeps answering others meanwhile and closes the stalled connection once its read timeout passes."""
    import socket
    import threading
    import time

    from attrib_audit.validate.label import serve

    server = serve(label_server.pool.path, "alice", port=0)
    server.read_timeout = 0.5  # the READ_TIMEOUT of a real run is seconds; a test waits for less
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        stuck = socket.create_connection(("127.0.0.1", server.server_port), timeout=10)
        with stuck:
            stuck.sendall(f"POST /api/label HTTP/1.1\r\nHost: 127.0.0.1:{server.server_port}\r\n"
                          f"X-Token: {server.token}\r\nContent-Length: 100\r\n\r\n{{\"index\": 0".encode())
            start = time.monotonic()
            assert post(server, json.dumps(a_label(server, 2)).encode())[0] == 200  # others are still served
            assert stuck.recv(4096) == b""  # closed by the server, no reply: a socket timeout here fails the test
            assert time.monotonic() - start < 5
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("content", [b"notes, not a database" * 20, bytes(range(256)) * 4])
def test_a_label_store_that_is_not_sqlite_is_one_line(tmp_path, content):
    pool = tmp_path / "pool.jsonl"
    pool.write_bytes(demo_paths()[0].read_bytes())
    store = tmp_path / "pool.jsonl.labels.sqlite"
    store.write_bytes(content)
    for argv in (["label", str(pool), "--annotator", "a", "--port", "0"],
                 ["label", str(pool), "--export", str(tmp_path / "x.jsonl")]):
        err = one_line(*run(argv))
        assert f"{store} is not an attrib-audit label store" in err
    assert store.read_bytes() == content and not (tmp_path / "x.jsonl").exists()


# ---- 5: report cells edited to numbers, null, lists, booleans or objects --------------------------------------------

# every cell the report draws from results.json is a typed field now (the data entries included): a value of the
# wrong type is refused in one line (tests/test_results_reader.py); a string of markup is drawn inert
@pytest.mark.parametrize("value", [None, 3, True, [1, "<b>x</b>"], {"a": "<b>x</b>"}])
def test_a_report_cell_of_the_wrong_type_is_one_line_naming_its_key(audited, tmp_path, value):
    """A data entry's path edited to null, a number, a list or an object once reached html.escape; it is refused
    when results.json is read, naming the file and key."""
    d = tmp_path / "res"
    shutil.copytree(audited, d)
    res = json.loads((d / "results.json").read_text())
    res["data"][0]["path"] = value
    (d / "results.json").write_text(json.dumps(res))
    code, err = run(["report", str(d)])
    assert code == 2 and "Traceback" not in err and "\n" not in err.strip(), err
    assert "results.json: key 'data[0].path': expected a string, got " in err, err


def test_a_report_cell_of_markup_renders_escaped(audited, tmp_path):
    d = tmp_path / "res"
    shutil.copytree(audited, d)
    res = json.loads((d / "results.json").read_text())
    res["data"][0]["path"] = "<b>x</b>.jsonl"
    (d / "results.json").write_text(json.dumps(res))
    code, err = run(["report", str(d)])
    assert code == 0 and "Traceback" not in err, err
    page = (d / "report.html").read_text()
    assert "<b>x</b>" not in page and "<b>x</b>" not in (d / "report.md").read_text()
    assert "&lt;b&gt;x&lt;/b&gt;.jsonl" in page


CELL = JSON_VALUE | st.text(alphabet="<>&\"'`*_[]()#|\\\n ab", max_size=12)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(CELL, min_size=2, max_size=2), max_size=4), CELL, CELL)
def test_any_cell_value_renders_inert_in_both_formats(rows, caption, para):
    """The two renderers take any value a saved file can hold: no exception, no tag or table line of their own."""
    from attrib_audit.report.blocks import Note, Para, Section, Table
    from attrib_audit.report.render import to_html, to_markdown

    def page(rows, caption, para) -> list[Section]:
        return [Section("k", "title", [Table(["a", "b"], rows, caption), Para(para), Note(caption)])]

    sections = page(rows, caption, para)
    plain = page([["x", "x"] for _ in rows], "x" if caption else "", "x")
    tags = re.compile(r"<[^>]*>")
    assert tags.findall(to_html("t", "m", sections)) == tags.findall(to_html("t", "m", plain))  # no tag of its own
    md = to_markdown("t", "m", sections, Path("report.md"))
    assert sum(line.startswith("|") for line in md.splitlines()) == len(rows) + 2  # header, rule, one per row


# ---- 6: output piped to a reader that stops early (`attrib-audit models list | head -1`) -----------------------------

@pytest.mark.parametrize("argv", [["models", "list"], ["select", "--results", "AUDITED"], ["report", "AUDITED"],
                                  ["--help"]])
def test_a_closed_pipe_ends_quietly(audited, tmp_path, argv):
    """A real process whose stdout is a pipe no one reads any more: no BrokenPipeError traceback, nothing on
    stderr, and 141 (128 + SIGPIPE, as a shell reports a killed writer) or 0 when it had nothing left to write."""
    import os
    import subprocess
    import sys

    d = tmp_path / "res"
    shutil.copytree(audited, d)
    argv = [str(d) if a == "AUDITED" else a for a in argv]
    read, write = os.pipe()
    os.close(read)  # `head` has gone before the first line
    try:
        proc = subprocess.run([sys.executable, "-m", "attrib_audit", *argv], stdout=write, stderr=subprocess.PIPE,
                              env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")},
                              timeout=300)
    finally:
        os.close(write)
    assert proc.stderr == b"" and proc.returncode in (141, 0), proc.stderr.decode()
    assert proc.returncode == (0 if argv == ["--help"] else 141)


# ---- 7: escape sequences in a data file's names and fields never reach the terminal --------------------------------

ESC = "\x1b]0;pwned\x07\x1b[2J"


@pytest.mark.parametrize("edit, expect", [
    (lambda r: r, 0),  # progress and log lines (not --quiet) name the datasets and sources
    (lambda r: {**r, "label": "x" + ESC} if r["id"] == "r3" else r, 2),  # the error line quotes the value
    (lambda r: {**r, "id": ESC} if r["id"] in ("r2", "r5") else r, 2),  # ... or the duplicated id
])
def test_escape_sequences_in_data_reach_the_terminal_inert(tmp_path, edit, expect):
    rows = [edit({"id": f"r{i}", "claim": f"claim {i}", "evidence": f"evidence {i}", "label": i % 2,
                  "dataset": "ds" + ESC, "source": "src" + ESC}) for i in range(30)]
    data = tmp_path / "d.jsonl"
    data.write_bytes(b"\xef\xbb\xbf" + "".join(json.dumps(r) + "\n" for r in rows).encode())  # with a BOM, too
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["audit", str(data), "--scorers", "lexical", "--n-boot", "20", "--n-perm", "20", "--no-cache",
                     "--out", str(tmp_path / "o")])
    shown = out.getvalue() + err.getvalue()
    assert code == expect and "Traceback" not in shown, shown
    assert "\x1b" not in shown and "\x07" not in shown and "\\x1b]0;pwned\\x07" in shown, shown


# ---- 8: every command's outputs get the umask's permissions (files 0644, folders 0755 under umask 022) --------------

def test_score_sample_and_report_outputs_keep_the_umask_permissions(audited, tmp_path):
    """test_untrusted_files covers `audit --out`; these are the other writers (score, its provenance, sample,
    report)."""
    import os
    import stat

    d = tmp_path / "res"
    shutil.copytree(audited, d)
    old = os.umask(0o022)
    try:
        for argv in (["score", str(demo_paths()[0]), "--scorers", "lexical", "--no-cache", "--quiet",
                      "--out", str(tmp_path / "s.csv")],
                     ["sample", str(demo_paths()[0]), "--n", "10", "--strategy", "stratified", "--scorers", "lexical",
                      "--no-cache", "--quiet", "--out", str(tmp_path / "p.jsonl")],
                     ["report", str(d)]):
            assert run(argv)[0] == 0, argv
    finally:
        os.umask(old)
    for path in (tmp_path / "s.csv", tmp_path / "s.csv.provenance.json", tmp_path / "p.jsonl", d / "report.html",
                 d / "report.md", *(d / "plots").iterdir()):
        assert stat.S_IMODE(path.stat().st_mode) == 0o644, path
    assert stat.S_IMODE((d / "plots").stat().st_mode) == 0o755


# ---- JSON nested past Python's recursion limit, in any file the tool reads -----------------------------------------

DEEP = "[" * 100_000


@pytest.mark.parametrize("name, text, row", [
    ("deep.jsonl", DEEP, 1), ("deep.json", DEEP, 1),
    ("late.jsonl", "".join(json.dumps({"id": f"r{i}", "claim": "c", "evidence": "e", "label": i % 2}) + "\n"
                           for i in range(10)) + '{"id": ' + DEEP + "\n", 11),
])
def test_a_data_file_nested_too_deeply_is_one_line(tmp_path, name, text, row):
    """json.loads raised RecursionError, which no reader caught: a traceback."""
    data = tmp_path / name
    data.write_text(text)
    err = one_line(*run(["audit", str(data), *FAST, "--out", str(tmp_path / "o")]))
    assert f"{data}, row {row}: invalid JSON (nested more than 100 deep)" in err, err


def test_an_output_manifest_nested_too_deeply_vouches_for_nothing(audited, tmp_path):
    """The record of what attrib-audit wrote in a folder (.attrib-audit.json), crafted: read as no record, so the
    files there count as the user's (a traceback before)."""
    d = tmp_path / "res"
    shutil.copytree(audited, d)
    (d / ".attrib-audit.json").write_text(DEEP)
    err = one_line(*run(["audit", str(demo_paths()[0]), *FAST, "--out", str(d)]))
    assert "results.json exists and attrib-audit did not write it" in err
