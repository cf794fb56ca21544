"""`attrib-audit sample` → `label` (a real server, driven in headless Chromium) → `--export` → `audit` / `agree`."""
from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import average_precision_score, cohen_kappa_score

from attrib_audit.cli import main
from attrib_audit.data.demo import demo_paths
from attrib_audit.report.browser import Browser, find_chromium
from attrib_audit.scorers import get_scorer
from attrib_audit.stats import ht_auroc
from attrib_audit.validate.label import overlap_segments
from attrib_audit.validate.store import LabelStore, store_path

SRC = Path(__file__).resolve().parents[1] / "src"
PAIR = "document.getElementById('pair').dataset"


def quiet_main(*argv) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(list(argv)) == 0
    return buf.getvalue()


@pytest.fixture
def to_label(tmp_path) -> Path:
    """40 demo pairs chosen by the real `sample` command (stratified on lexical scores, by cluster)."""
    out = tmp_path / "to_label.jsonl"
    quiet_main("sample", str(demo_paths()[0]), "--n", "40", "--strategy", "stratified", "--scorers", "lexical",
               "--cluster-by", "group", "--no-cache", "--quiet", "--out", str(out))
    return out


@contextlib.contextmanager
def label_server(path: Path, annotator: str):
    """`attrib-audit label` as a real process; yields its URL. The caller may kill it."""
    proc = subprocess.Popen([sys.executable, "-m", "attrib_audit", "label", str(path), "--annotator", annotator,
                             "--port", "0"], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(SRC)})
    try:
        url = next(line.split()[1] for line in proc.stdout if line.startswith("open "))
        yield proc, url
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.stdout.close()


def need_chromium():
    if find_chromium() is None:
        pytest.fail("chromium is required for the labelling page test (Debian: apt-get install chromium)")


def test_sample_writes_inclusion_probabilities_and_whole_clusters(to_label):
    rows = [json.loads(line) for line in to_label.read_text().splitlines()]
    assert all(0 < r["inclusion_prob"] <= 1 and "label" not in r for r in rows)
    groups = {r["group"] for r in rows}
    pool = [json.loads(line) for line in demo_paths()[0].read_text().splitlines()]
    assert {r["id"] for r in rows} == {p["id"] for p in pool if p["group"] in groups}  # whole clusters
    assert rows[0]["sample_design"]["strategy"] == "stratified"


def test_label_page_keys_restart_resume_export_and_audit(to_label, tmp_path):
    need_chromium()
    store = store_path(to_label)
    with Browser() as browser:
        tab = browser.new_tab()
        with label_server(to_label, "alice") as (proc, url):
            tab.navigate(url)
            tab.wait_for(f"{PAIR}.index === '0'")
            for key in "snsns":
                tab.press(key)
            tab.wait_for(f"{PAIR}.done === '5' && {PAIR}.index === '5'")
            shot, _ = tab.screenshot(tmp_path / "label_page.png")
            assert shot.stat().st_size > 10_000
            assert tab.console_errors() == []
            assert all(u.startswith(url.split("/?")[0]) for u in tab.network())  # nothing leaves the machine
            proc.send_signal(signal.SIGKILL)
        assert len(LabelStore(store).decisions("alice")) == 5
        with label_server(to_label, "alice") as (_, url):
            tab.navigate(url)
            tab.wait_for(f"{PAIR}.index === '5'")  # resumes at pair 6
            assert tab.evaluate(f"{PAIR}.done") == "5"
            n = len(to_label.read_text().splitlines())
            assert tab.evaluate("document.getElementById('pos').textContent") == f"pair 6 of {n}"
            tab.press("b")  # back to pair 5, which shows its label, and relabel it
            tab.wait_for(f"{PAIR}.index === '4'")
            assert tab.evaluate("document.getElementById('prior').textContent") == "your label: supported"
            tab.press("n")
            tab.wait_for(f"{PAIR}.index === '5' && document.getElementById('status').textContent.includes('pair 5')")
    ids = [json.loads(line)["id"] for line in to_label.read_text().splitlines()]
    stored = LabelStore(store).decisions("alice")
    assert [stored[i] for i in ids[:5]] == ["supported", "not_supported", "supported", "not_supported", "not_supported"]

    labelled = tmp_path / "labelled.jsonl"
    assert "exported 5 labels by alice" in quiet_main("label", str(to_label), "--export", str(labelled))
    rows = [json.loads(line) for line in labelled.read_text().splitlines()]
    assert [r["label"] for r in rows] == [1, 0, 1, 0, 0] and all(r["annotator"] == "alice" for r in rows)
    quiet_main("audit", str(labelled), "--scorers", "lexical", "--n-boot", "50", "--n-perm", "20", "--no-cache",
               "--quiet", "--out", str(tmp_path / "audit"))
    res = json.loads((tmp_path / "audit" / "results.json").read_text())
    assert res["slices"][0]["weighting"].startswith("horvitz-thompson")
    lex = get_scorer("lexical").score([r["claim"] for r in rows], [r["evidence"] for r in rows]).scores
    expect = ht_auroc(lex, np.array([r["label"] for r in rows]), 1 / np.array([r["inclusion_prob"] for r in rows]))
    assert res["auroc"][0]["auroc"] == pytest.approx(expect, abs=1e-12)
    y, w = np.array([r["label"] for r in rows]), 1 / np.array([r["inclusion_prob"] for r in rows])
    [comp] = res["transfer"]["slices"]  # AUPRC and prevalence are Horvitz–Thompson estimates too
    assert comp["weighted"] and comp["prevalence"] == pytest.approx((w * y).sum() / w.sum())
    assert comp["auprc"]["lexical"]["auprc"] == pytest.approx(average_precision_score(y, lex, sample_weight=w))
    assert "Horvitz–Thompson weighted" in quiet_main("plan", "--results", str(tmp_path / "audit"), "--half-width",
                                                     "0.2")


def test_two_tabs_labelling_at_once_lose_no_label(to_label):
    """Two annotators in two tabs pressing keys without waiting: every press is stored, each under its annotator."""
    need_chromium()
    with Browser() as browser, label_server(to_label, "alice") as (_, url):
        tabs = [browser.new_tab(), browser.new_tab()]
        tabs[0].navigate(url)
        tabs[1].navigate(url.replace("annotator=alice", "annotator=bob"))
        for tab in tabs:
            tab.wait_for(f"{PAIR}.index === '0'")
        for key_a, key_b in zip("ssnnsnsn", "nsnsnnss"):  # interleaved, no waiting between presses
            tabs[0].press(key_a)
            tabs[1].press(key_b)
        for tab in tabs:
            tab.wait_for(f"{PAIR}.done === '8'")
    store = LabelStore(store_path(to_label))
    ids = [json.loads(line)["id"] for line in to_label.read_text().splitlines()]
    word = {"s": "supported", "n": "not_supported"}
    assert [store.decisions("alice")[i] for i in ids[:8]] == [word[k] for k in "ssnnsnsn"]
    assert [store.decisions("bob")[i] for i in ids[:8]] == [word[k] for k in "nsnsnnss"]


def _post(url: str, body: dict, token: str | None, host: str | None = None) -> tuple[int, dict]:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json", **({"X-Token": token} if token else {}),
                                          **({"Host": host} if host else {})})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_api_refuses_foreign_writes_and_keeps_the_first_of_two_clashing_tabs(to_label, tmp_path):
    with label_server(to_label, "carol") as (_, url):
        base = url.split("/?")[0]
        page = urllib.request.urlopen(url, timeout=10).read().decode()
        token = json.loads(page.split('<script id="config" type="application/json">')[1].split("</script>")[0])["token"]
        first = json.loads(urllib.request.urlopen(base + "/api/pair?annotator=carol&i=0", timeout=10).read())
        body = {"annotator": "carol", "index": 0, "id": first["id"], "decision": "supported", "seen": None}
        assert _post(base + "/api/label", body, None)[0] == 403  # no token: a foreign page cannot write
        assert _post(base + "/api/label", body, token, host="evil.example:80")[0] == 403  # DNS rebinding
        assert _post(base + "/api/label", {**body, "id": "other"}, token)[0] == 400
        assert _post(base + "/api/label", body, token) == (200, {"next": 1, "done": 1, "n": first["n"]})
        code, reply = _post(base + "/api/label", {**body, "decision": "not_supported"}, token)  # a stale second tab
        assert code == 409 and reply["stored"] == "supported"
        assert LabelStore(store_path(to_label)).decisions("carol") == {first["id"]: "supported"}


def test_two_annotators_export_gives_kappa_through_agree(to_label, tmp_path):
    ids = [json.loads(line)["id"] for line in to_label.read_text().splitlines()]
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2, len(ids))
    b = np.where(rng.random(len(ids)) < 0.8, a, 1 - a)
    store = LabelStore(store_path(to_label))
    word = {1: "supported", 0: "not_supported"}
    for i, pid in enumerate(ids):
        store.put("alice", pid, word[int(a[i])])
        if i < 30:  # bob has not finished: his missing rows are left out of κ
            store.put("bob", pid, word[int(b[i])])
    out = quiet_main("label", str(to_label), "--export", str(tmp_path / "labelled.jsonl"), "--annotator", "alice")
    assert "attrib-audit agree --results" in out
    folder = tmp_path / "labelled.annotators"
    res = quiet_main("agree", "--results", str(folder), "--a", "alice", "--b", "bob", "--n-boot", "50")
    kappa = json.loads((folder / "agreement.json").read_text())["pairs"][0]["overall"]
    assert kappa["n"] == 30 and kappa["n_excluded"] == len(ids) - 30
    assert kappa["kappa"] == pytest.approx(cohen_kappa_score(a[:30], b[:30]), abs=1e-12)
    assert "alice" in res


def test_export_needs_an_annotator_when_several_labelled(to_label, tmp_path, capsys):
    assert main(["label", str(to_label), "--export", str(tmp_path / "x.jsonl")]) == 2
    assert "no labels yet" in capsys.readouterr().err
    store = LabelStore(store_path(to_label))
    pid = json.loads(to_label.read_text().splitlines()[0])["id"]
    store.put("alice", pid, "supported")
    store.put("bob", pid, "skip")
    assert main(["label", str(to_label), "--export", str(tmp_path / "x.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("attrib-audit label: 2 annotators") and err.count("\n") == 1


def test_overlap_segments_mark_shared_content_words_only():
    segs = overlap_segments("The cat sat on the heavy-duty mat.", "A cat and the mat, heavy duty")
    assert [p for p, hit in segs if hit] == ["cat", "heavy-duty mat"]
    assert "".join(p for p, _ in segs) == "The cat sat on the heavy-duty mat."


def test_select_on_the_audited_target_dataset_names_its_best_metric_or_the_ties():
    from attrib_audit.audit.recommend import on_target
    from attrib_audit.report.console import format_recommendation
    from attrib_audit.stats import bootstrap_aurocs

    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 600)
    a = 1.5 * y + rng.normal(0, 1, 600)
    scores = np.vstack([a, 0.3 * y + rng.normal(0, 1, 600), a + rng.normal(0, 0.05, 600)])  # c: a near tie
    boot = bootstrap_aurocs(scores, y, np.arange(600) // 2, n_boot=500, rng=0)
    rec = on_target("attribution", "mine", ["a", "b", "c"], boot)
    assert rec.metric == "a" and rec.verdict == "tied-on-target" and "separate it from c" in rec.caveat
    rec = on_target("attribution", "mine", ["a", "b"], bootstrap_aurocs(scores[:2], y, np.arange(600) // 2, n_boot=500))
    assert rec.verdict == "best-on-target" and "recommended for mine: a" in format_recommendation(rec)


@pytest.mark.parametrize("argv, message", [
    (["--n", "500"], "--n must be between 1 and the pool size (200)"),
    (["--n", "10", "--strategy", "disagreement", "--scorers", "lexical"], "needs at least two --scorers"),
])
def test_sample_argument_errors(tmp_path, argv, message, capsys):
    assert main(["sample", str(demo_paths()[0]), "--strategy", "random", *argv, "--out",
                 str(tmp_path / "s.jsonl")]) == 2
    err = capsys.readouterr().err  # one line, exit 2, no traceback
    assert err.startswith("attrib-audit sample: ") and message in err and err.count("\n") == 1


def test_bad_pool_rows_and_inclusion_probabilities_are_one_line_errors(tmp_path, capsys):
    pool = tmp_path / "pool.jsonl"
    pool.write_text('{"claim": "a", "evidence": "b"}\n{"claim": "c"}\n')
    assert main(["sample", str(pool), "--n", "1", "--strategy", "random", "--out", str(tmp_path / "s.jsonl")]) == 2
    assert "row 2" in capsys.readouterr().err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"claim": "a", "evidence": "b", "label": 1, "inclusion_prob": 0.5}\n'
                   '{"claim": "c", "evidence": "d", "label": 0, "inclusion_prob": 1.5}\n')
    assert main(["audit", str(bad), "--scorers", "lexical", "--no-cache", "--quiet", "--out", str(tmp_path / "a")]) == 2
    err = capsys.readouterr().err
    assert "row 2" in err and "inclusion_prob 1.5 must be in (0, 1]" in err and "Traceback" not in err


def test_sample_from_python_without_a_scoring_config_is_a_usage_error(tmp_path):
    """Only `random` needs no scores; the other strategies name what they lack instead of failing inside."""
    from attrib_audit.errors import UsageError
    from attrib_audit.validate.sample import sample

    with pytest.raises(UsageError, match=r"^--strategy stratified needs --scorers"):
        sample(demo_paths()[0], tmp_path / "s.jsonl", 5, strategy="stratified", config=None)
    assert not (tmp_path / "s.jsonl").exists()
    assert sample(demo_paths()[0], tmp_path / "r.jsonl", 5, strategy="random", config=None).chosen.size == 5


def _long_pool(path: Path) -> Path:
    """Three pairs whose evidence is a 1,500-word page with a long unbroken URL, as real cited web pages are."""
    rng = np.random.default_rng(0)
    vocab = "volleyball team university national league season coach players championship trophy".split()
    rows = []
    for i in range(3):
        words = [vocab[j] for j in rng.integers(0, len(vocab), 1500)]
        words[100] = "https://example.org/" + "a-very-long-path-segment" * 12
        words[200:206] = ["all", "of", "them", "made", "it", "happen"]
        rows.append({"id": f"p{i}", "claim": "All of the volleyball players made the national team in the season.",
                     "evidence": " ".join(words), "dataset": "wiceish", "construct": "fact-check",
                     "inclusion_prob": 0.5, "sample_design": {"pool_size": 6}})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_label_page_with_a_1500_word_evidence_wraps_scrolls_keeps_the_claim_and_stores_partial_and_note(tmp_path):
    need_chromium()
    pool = _long_pool(tmp_path / "long.jsonl")
    with Browser() as browser:
        tab = browser.new_tab()
        with label_server(pool, "alice") as (_, url):
            tab.navigate(url)
            tab.wait_for(f"{PAIR}.index === '0'")
            geo = tab.evaluate("""(() => { const ev = document.getElementById('evidence');
                const doc = document.documentElement;
                return {docW: doc.scrollWidth, viewW: doc.clientWidth, evW: ev.scrollWidth, evCW: ev.clientWidth,
                        evH: ev.scrollHeight, evCH: ev.clientHeight}; })()""")
            assert geo["docW"] <= geo["viewW"] and geo["evW"] <= geo["evCW"], geo  # no horizontal scroll anywhere
            assert geo["evH"] > 2 * geo["evCH"], geo  # the evidence scrolls inside its box
            marks = tab.evaluate("Array.from(document.querySelectorAll('#evidence mark')).map(m => m.textContent)")
            assert "volleyball" in " ".join(marks) and not {"all", "made", "of", "it"} & {m.lower() for m in marks}
            tab.evaluate("document.getElementById('evidence').scrollTop = 400")
            shot, _ = tab.screenshot(tmp_path / "label_page_long.png")
            assert shot.stat().st_size > 10_000
            tab.evaluate("document.getElementById('evidence').scrollTop = 1e6; window.scrollTo(0, 1e6)")
            box = tab.evaluate("(() => { const r = document.getElementById('claimcard').getBoundingClientRect();"
                               " return {top: r.top, bottom: r.bottom, h: window.innerHeight}; })()")
            assert 0 <= box["top"] and box["bottom"] <= box["h"], box  # the claim stays in view
            tab.evaluate("document.getElementById('note').value = 'second half unsupported'")
            tab.press("p")
            tab.wait_for(f"{PAIR}.index === '1'")
            tab.press("s")
            tab.wait_for(f"{PAIR}.index === '2'")
            assert tab.console_errors() == []
    entries = LabelStore(store_path(pool)).entries("alice")
    assert entries["p0"][0] == "partial" and entries["p0"][2] == "second half unsupported"
    out = tmp_path / "labelled.jsonl"
    assert main(["label", str(pool), "--export", str(out)]) == 2  # a partial answer is never guessed
    text = quiet_main("label", str(pool), "--export", str(out), "--label-map", "partial=0")
    assert "1 'partial' answers labelled 0" in text and "--construct fact-check" in text
    assert "describe the 6-pair pool it was sampled from" in text
    rows = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert rows["p0"]["label"] == 0 and rows["p0"]["label_raw"] == "partial"
    assert rows["p0"]["annotator_note"] == "second half unsupported" and rows["p1"]["label"] == 1


def test_sample_takes_the_pools_own_metric_column_and_mapped_fields(tmp_path):
    rows = [{"uid": f"r{i}", "text": f"claim {i}", "page": f"evidence {i} words", "mine": float(i % 7)}
            for i in range(60)]
    pool = tmp_path / "pool.jsonl"
    pool.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "s.jsonl"
    quiet_main("sample", str(pool), "--n", "20", "--strategy", "disagreement", "--scorers", "lexical", "--score-col",
               "mine=mine", "--id-col", "uid", "--claim-col", "text", "--evidence-col", "page", "--no-cache",
               "--quiet", "--out", str(out))
    got = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(got) == 20 and got[0]["sample_design"]["scorers"] == ["lexical", "mine"]
    assert all(r["claim"].startswith("claim ") and r["evidence"].startswith("evidence ") for r in got)
    assert {r["id"] for r in got} <= {r["uid"] for r in rows}
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(json.dumps({**r, "mine": "n/a" if i == 3 else r["mine"]}) + "\n"
                           for i, r in enumerate(rows)))
    assert main(["sample", str(bad), "--n", "5", "--scorers", "lexical", "--score-col", "mine=mine", "--claim-col",
                 "text", "--evidence-col", "page", "--no-cache", "--quiet", "--out", str(tmp_path / "b.jsonl")]) == 2


def test_sample_takes_a_score_file_joined_on_id_as_audit_does(tmp_path, capsys):
    """`--scores FILE` steers the sample exactly as the same values in a pool column would; gaps are one line."""
    rows = [{"uid": f"r{i}", "text": f"claim {i}", "page": f"evidence {i} words", "mine": float((i * 7) % 11),
             "theirs": float(i % 5)} for i in range(60)]
    pool = tmp_path / "pool.jsonl"
    pool.write_text("".join(json.dumps({k: r[k] for k in ("uid", "text", "page")}) + "\n" for r in rows))
    with_cols = tmp_path / "with_cols.jsonl"
    with_cols.write_text("".join(json.dumps(r) + "\n" for r in rows))
    scores = tmp_path / "scores.csv"
    scores.write_text("id,mine,theirs\n" + "".join(f"{r['uid']},{r['mine']},{r['theirs']}\n" for r in reversed(rows)))
    common = ["--n", "20", "--strategy", "disagreement", "--scorers", "none", "--id-col", "uid", "--claim-col", "text",
              "--evidence-col", "page", "--no-cache", "--quiet"]
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    quiet_main("sample", str(pool), "--scores", str(scores), *common, "--out", str(a))
    quiet_main("sample", str(with_cols), "--score-col", "mine=mine", "--score-col", "theirs=theirs", *common,
               "--out", str(b))
    got_a = [json.loads(line) for line in a.read_text().splitlines()]
    got_b = [json.loads(line) for line in b.read_text().splitlines()]
    assert got_a[0]["sample_design"]["scorers"] == ["mine", "theirs"]
    assert [(r["id"], r["inclusion_prob"]) for r in got_a] == [(r["id"], r["inclusion_prob"]) for r in got_b]
    assert len({r["inclusion_prob"] for r in got_a}) > 1  # the scores steered the draw: probabilities differ
    scores.write_text("id,mine,theirs\n" + "".join(f"{r['uid']},{r['mine']},{r['theirs']}\n" for r in rows[1:]))
    assert main(["sample", str(pool), "--scores", str(scores), *common, "--out", str(tmp_path / "c.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "scores.csv" in err and "'r0'" in err and "Traceback" not in err


def test_sample_joins_an_evaluator_export_on_the_pair_text_when_the_pool_has_no_ids(tmp_path):
    rows = [{"text": f"claim {i}", "page": f"evidence {i} words"} for i in range(30)]
    pool = tmp_path / "pool.jsonl"
    pool.write_text("".join(json.dumps(r) + "\n" for r in rows))
    export = tmp_path / "ragas.csv"  # a ragas export: question, contexts, answer and the metric, no pair id
    with export.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["user_input", "retrieved_contexts", "response", "faithfulness"])
        w.writerows(["q", json.dumps([r["page"]]), r["text"], (i * 7) % 11 / 10] for i, r in enumerate(rows))
    out = tmp_path / "s.jsonl"
    quiet_main("sample", str(pool), "--n", "10", "--strategy", "stratified", "--scorers", "none", "--scores",
               str(export), "--claim-col", "text", "--evidence-col", "page", "--quiet", "--out", str(out))
    got = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(got) == 10 and got[0]["sample_design"]["scorers"] == ["faithfulness"]
