"""The report's figure cache: the same numbers give the same SVG without drawing; anything else draws anew."""
from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from attrib_audit.audit.transfer import TransferSection
from attrib_audit.files.paths import figures_path
from attrib_audit.files.records import from_record
from attrib_audit.report import style
from attrib_audit.report.transfer import regret_plot

DATA = Path(__file__).parent / "data"


def _rec(block: dict) -> TransferSection:
    """A saved transfer block as the record the plot takes."""
    return from_record(TransferSection, block, where="report_transfer_demo.json")


@pytest.fixture
def transfer() -> dict:
    """A transfer block an audit of the demo saved (lexical + minilm): real numbers for a real plot function."""
    return json.loads((DATA / "report_transfer_demo.json").read_text())


@pytest.fixture
def draws(monkeypatch) -> list[int]:
    """Counts the times a plot function really draws (asks for matplotlib)."""
    calls: list[int] = []
    real = style.pyplot

    def counted():
        calls.append(1)
        return real()

    monkeypatch.setattr(style, "pyplot", counted)
    return calls


def test_the_same_numbers_reuse_the_svg_without_drawing(transfer, draws, tmp_path):
    first = regret_plot(_rec(transfer), tmp_path / "a")
    assert draws and len(list(figures_path().glob("*.json"))) == 1
    drawn = len(draws)
    again = regret_plot(_rec(copy.deepcopy(transfer)), tmp_path / "b")
    assert len(draws) == drawn  # not drawn again
    assert again.svg == tmp_path / "b" / "lodo_regret.svg"
    assert again.svg.read_bytes() == first.svg.read_bytes()
    assert (again.name, again.caption, again.alt, again.width_px, again.png) == \
           (first.name, first.caption, first.alt, first.width_px, None)


def test_other_numbers_or_png_draw_anew(transfer, draws, tmp_path):
    regret_plot(_rec(transfer), tmp_path / "a")
    n = len(draws)
    edited = copy.deepcopy(transfer)
    fixed = edited["constructs"]["attribution"]["regret"]["fixed"][0]
    fixed["mean"] += 0.01
    regret_plot(_rec(edited), tmp_path / "b")
    assert len(draws) > n
    n = len(draws)
    with style.png_copies(True):
        fig = regret_plot(_rec(transfer), tmp_path / "c")
    assert len(draws) > n and fig.png.read_bytes().startswith(b"\x89PNG")
    n = len(draws)
    with style.png_copies(True):
        again = regret_plot(_rec(transfer), tmp_path / "d")
    assert len(draws) == n and again.png.read_bytes() == fig.png.read_bytes()
    assert len(list(figures_path().glob("*.json"))) == 3


@pytest.mark.parametrize("entry", [
    "not json",
    json.dumps({"name": "../../escaped", "caption": "c", "alt": "a", "width_px": 10, "svg": "<svg/>", "png": None}),
    json.dumps({"name": "ok", "caption": "c", "alt": "a", "width_px": "10", "svg": "<svg/>", "png": None}),
    json.dumps(["a", "list"]),
])
def test_an_unreadable_or_hostile_entry_is_drawn_again_and_replaced(transfer, draws, tmp_path, entry):
    first = regret_plot(_rec(transfer), tmp_path / "a")
    (path,) = figures_path().glob("*.json")
    path.write_text(entry)
    n = len(draws)
    fig = regret_plot(_rec(transfer), tmp_path / "plots")
    assert len(draws) > n
    assert fig.svg.read_bytes() == first.svg.read_bytes()
    assert sorted(p.name for p in tmp_path.rglob("*.svg")) == ["lodo_regret.svg", "lodo_regret.svg"]
    assert not list(tmp_path.parent.rglob("escaped*")) and not list(tmp_path.rglob("ok.svg"))
    assert json.loads(path.read_text())["name"] == "lodo_regret"


def test_a_report_rebuilt_from_the_same_results_imports_no_matplotlib(transfer, tmp_path):
    """The point of the cache: a cached rerun's report does not pay for importing and running matplotlib."""
    (tmp_path / "transfer.json").write_text(json.dumps(transfer))
    child = ("import json, sys; from pathlib import Path; from attrib_audit.report.transfer import regret_plot; "
             "from attrib_audit.audit.transfer import TransferSection; "
             "from attrib_audit.files.records import from_record; "
             "fig = regret_plot(from_record(TransferSection, json.loads(Path(sys.argv[1]).read_text())), "
             "Path(sys.argv[2])); "
             "print(fig.svg.stat().st_size, 'matplotlib' in sys.modules)")
    env = {**os.environ, "ATTRIB_AUDIT_HOME": str(tmp_path / "home")}
    runs = [subprocess.run([sys.executable, "-c", child, str(tmp_path / "transfer.json"), str(tmp_path / f"p{i}")],
                           env=env, capture_output=True, text=True, check=True).stdout.split() for i in range(2)]
    assert runs[0][1] == "True" and runs[1] == [runs[0][0], "False"]


def test_a_home_that_cannot_be_written_still_draws(transfer, tmp_path, monkeypatch):
    blocker = tmp_path / "home"
    blocker.write_text("a file where the home folder should be")
    monkeypatch.setenv("ATTRIB_AUDIT_HOME", str(blocker))
    fig = regret_plot(_rec(transfer), tmp_path / "plots")
    assert fig.svg.read_text().lstrip().startswith("<?xml")


def test_the_cache_keeps_the_entries_used_last(transfer, draws, tmp_path, monkeypatch):
    """Bounded: past MAX_ENTRIES the entry used longest ago goes; a hit counts as a use."""
    import attrib_audit.report.figcache as figcache

    monkeypatch.setattr(figcache, "MAX_ENTRIES", 2)

    def variant(delta: float) -> dict:
        edited = copy.deepcopy(transfer)
        edited["constructs"]["attribution"]["regret"]["fixed"][0]["mean"] += delta
        return edited

    regret_plot(_rec(variant(0.01)), tmp_path / "a")
    (first,) = figures_path().glob("*.json")
    regret_plot(_rec(variant(0.02)), tmp_path / "b")
    (second,) = set(figures_path().glob("*.json")) - {first}
    os.utime(first, ns=(10**18, 10**18))  # drawn long ago ...
    os.utime(second, ns=(15 * 10**17, 15 * 10**17))
    n = len(draws)
    regret_plot(_rec(variant(0.01)), tmp_path / "c")  # ... but used again now
    assert len(draws) == n
    regret_plot(_rec(variant(0.03)), tmp_path / "d")
    left = set(figures_path().glob("*.json"))
    assert len(left) == 2 and first in left and second not in left
