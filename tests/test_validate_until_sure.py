"""`label --until-sure`: the flip log written before a pair is shown, resume from the store, non-response,
`--oracle` end to end through the CLI, `audit --until-sure`, and the live page in headless Chromium."""
from __future__ import annotations

import contextlib
import io
import json
import shutil
import threading
from pathlib import Path

import numpy as np
import pytest

from attrib_audit.cli import main
from attrib_audit.report.browser import Browser, find_chromium
from attrib_audit.validate.store import LabelStore, store_path
from attrib_audit.validate.until_sure import FlipLog, open_session, read_oracle, run_with_oracle
from attrib_audit.validate.until_sure_page import serve_until_sure

COLS = (("good", "s_good", False), ("mid", "s_mid", False), ("bad", "s_bad", False))


def run_cli(*argv: str) -> tuple[int, str]:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(list(argv))
    return code, buf.getvalue()


@pytest.fixture
def pool(tmp_path: Path) -> Path:
    """600 synthetic pairs with three precomputed metrics of known quality and a proxy probability."""
    rng = np.random.default_rng(0)
    n = 600
    y = (rng.random(n) < 0.45).astype(int)
    common = rng.normal(size=n)
    rows = []
    for i in range(n):
        rows.append({"id": f"p{i}", "claim": f"claim number {i} about topic {i % 17}",
                     "evidence": f"evidence {i}: topic {i % 17} text", "label": int(y[i]),
                     "s_good": float(1.8 * y[i] + 0.5 * common[i] + rng.normal()),
                     "s_mid": float(0.6 * y[i] + 0.5 * common[i] + rng.normal()),
                     "s_bad": float(0.1 * y[i] + rng.normal()),
                     "p": float(1 / (1 + np.exp(-(2.0 * y[i] - 1 + rng.normal()))))})
    path = tmp_path / "pool.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def session(path: Path, **kw: object):  # noqa: ANN201 - the UntilSure of these settings
    args = {"score_cols": COLS, "proxy_col": ("p", False), "budget": 300, "seed": 3, **kw}
    return open_session(path, **args)  # type: ignore[arg-type]


def test_every_flip_is_logged_before_its_pair_is_shown(pool: Path) -> None:
    s = session(pool)
    row = s.propose()
    assert row is not None
    flips = FlipLog(store_path(pool)).flips()
    assert flips and flips[-1][2] == row and flips[-1][4] and flips[-1][5] is None  # shown, not yet answered
    assert not any(f[4] for f in flips[:-1])  # the coins before it did not come up
    assert all(0 < f[3] <= 1 for f in flips)


def test_resume_after_restart_gives_the_uninterrupted_session(pool: Path, tmp_path: Path) -> None:
    answers = read_oracle(pool)
    whole = run_with_oracle(session(pool), answers)
    assert whole.decision == "best" and whole.best == "good" and whole.n_labels < 300

    other = tmp_path / "again" / "pool.jsonl"
    other.parent.mkdir()
    shutil.copy(pool, other)
    s = session(other)
    for _ in range(30):
        row = s.propose()
        assert row is not None
        s.answer("supported" if answers[s.pool.ids[row]] else "not_supported")
    shown = s.propose()  # shown, then the process dies before an answer
    del s
    resumed = session(other)
    assert resumed.pending_row == shown  # the unanswered pair is shown again
    again = run_with_oracle(resumed, answers)
    assert (again.n_labels, again.decision, again.best, again.visited) == \
        (whole.n_labels, whole.decision, whole.best, whole.visited)
    assert np.allclose(again.aurocs, whole.aurocs)
    assert len(LabelStore(store_path(other)).decisions("until-sure")) == whole.n_labels


def test_non_response_is_left_out_and_reported(pool: Path) -> None:
    answers = read_oracle(pool)
    holes = {k: v for i, (k, v) in enumerate(answers.items()) if i % 7}
    rep = run_with_oracle(session(pool), holes)
    assert rep.non_response > 0
    assert any("no answer" in c for c in rep.caveats)
    skipped = [f for f in FlipLog(store_path(pool)).flips() if f[5] == "skip"]
    assert len(skipped) == rep.non_response


def test_other_settings_are_refused_not_mixed(pool: Path) -> None:
    s = session(pool)
    s.propose()
    with pytest.raises(Exception, match="other settings"):
        session(pool, delta=0.05)


def test_oracle_cli_end_to_end_then_audit(pool: Path) -> None:
    cols = [a for n, c, _ in COLS for a in ("--score-col", f"{n}={c}")]
    code, out = run_cli("label", str(pool), "--until-sure", *cols, "--proxy", "p", "--budget", "300",
                        "--seed", "3", "--oracle", str(pool))
    assert code == 0
    assert "decision: good is the best for this data within 0.02 AUROC, at confidence 95%" in out
    assert "not for stopping" in out and "anytime-valid" in out
    used = int(out.split("labels used: ")[1].split()[0])
    assert 50 <= used < 300
    code, report = run_cli("audit", "--until-sure", str(pool))
    assert code == 0 and "good is the best" in report and "guarantee:" in report
    assert f"{used} labels" in report


def test_bad_oracle_is_one_line(pool: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "oracle.jsonl"
    bad.write_text('{"id": "p0", "label": "maybe"}\n')
    cols = [a for n, c, _ in COLS for a in ("--score-col", f"{n}={c}")]
    code = main(["label", str(pool), "--until-sure", *cols, "--proxy", "p", "--oracle", str(bad)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "oracle.jsonl" in err[0] and "row 1" in err[0]


def test_live_page_shows_standings_and_the_stop_banner(pool: Path, tmp_path: Path) -> None:
    if find_chromium() is None:
        pytest.fail("headless Chromium is needed for the page test")
    answers = read_oracle(pool)
    server = serve_until_sure(session(pool), port=0)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        with Browser() as browser:
            tab = browser.new_tab()
            tab.navigate(f"http://127.0.0.1:{server.server_port}/")
            tab.wait_for("document.getElementById('standings').children.length === 3")
            assert "not for stopping" in tab.evaluate("document.body.textContent")
            for _ in range(300):
                if tab.evaluate("document.body.classList.contains('over')"):
                    break
                pid = tab.wait_for("current && current.id")
                tab.press("s" if answers[pid] else "n")
                tab.wait_for(f"document.body.classList.contains('over') || (current && current.id !== '{pid}')")
            banner = tab.evaluate("document.getElementById('banner').textContent")
            assert "good is the best" in banner
            assert tab.evaluate("document.getElementById('banner').className") == "best"
            shot, _ = tab.screenshot(tmp_path / "until_sure.png")
            assert shot.stat().st_size > 10_000
            assert tab.console_errors() == []
    finally:
        server.shutdown()
        server.server_close()


def test_plan_until_sure_simulates_both_designs(pool: Path) -> None:
    cols = [a for n, c, _ in COLS for a in ("--score-col", f"{n}={c}")]
    code, out = run_cli("plan", "--until-sure", str(pool), *cols, "--proxy", "p", "--budget", "200", "--sims", "3")
    assert code == 0
    assert "δ 0.02" in out and "Bernoulli(p̂)" in out
    assert "uniform  median" in out and "active   median" in out and "fixed" in out


def test_until_sure_flags_without_until_sure_are_refused(pool: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["label", str(pool), "--annotator", "a", "--budget", "30"]) == 2
    assert "--budget belong(s) to --until-sure" in capsys.readouterr().err
    assert main(["plan", "--auroc", "0.8,0.7", "--prevalence", "0.4", "--proxy", "p"]) == 2
    assert "--proxy belong(s) to --until-sure" in capsys.readouterr().err
