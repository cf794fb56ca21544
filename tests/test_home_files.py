"""Files under $ATTRIB_AUDIT_HOME (and the judge's model folder) that are not what they claim: a FIFO, a folder, a
huge or malformed file, a planted entry. Each is read as a regular file of bounded size, checked field by field,
and ignored (then redrawn or rechecked) with a one-line warning; nothing hangs, crashes or is trusted."""
from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path
from unittest import mock

import pytest

from attrib_audit.cli import main
from attrib_audit.data.demo import demo_paths
from attrib_audit.files.jsonfile import sealed_json
from attrib_audit.files.paths import figures_path, home
from attrib_audit.report import figcache
from attrib_audit.scorers.judge.models import gguf_name
from attrib_audit.scorers.knownanswers import results_path

SRC = Path(__file__).resolve().parents[1] / "src"


def cli(*argv: str, timeout: int = 120) -> subprocess.CompletedProcess:
    """The command in a child process (so a hang is a timeout, not a stuck test run), with this test's home."""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    return subprocess.run([sys.executable, "-m", "attrib_audit", *argv], capture_output=True, text=True, env=env,
                          timeout=timeout)


@pytest.fixture(scope="module")
def audited(tmp_path_factory) -> Path:
    """An audit folder (lexical on the demo's AttributionBench pairs) with no report yet."""
    root = tmp_path_factory.mktemp("audit")
    with mock.patch.dict(os.environ, {"ATTRIB_AUDIT_HOME": str(root / "home")}):
        assert main(["audit", str(demo_paths()[0]), "--scorers", "lexical", "--n-boot", "50", "--n-perm", "50",
                     "--no-cache", "--quiet", "--out", str(root / "a")]) == 0
    return root / "a"


@pytest.fixture
def folder(audited, tmp_path) -> Path:
    shutil.copytree(audited, tmp_path / "a")
    return tmp_path / "a"


def report(folder: Path) -> subprocess.CompletedProcess:
    done = cli("report", str(folder))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    return done


def entries() -> list[Path]:
    return sorted(figures_path().glob("*.json"))


def replant(path: Path, **changes) -> None:
    """What an attacker can do: change an entry and recompute its (unkeyed) digest."""
    data = json.loads(path.read_text())
    data.update(changes)
    data["sha256"] = figcache._digest(data)
    path.write_text(json.dumps(data))


def plots(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted((folder / "plots").glob("*.svg"))}


def test_a_figure_entry_holding_a_lone_surrogate_is_drawn_again(folder):
    """It made every `report` traceback (UnicodeEncodeError writing the SVG) until deleted."""
    report(folder)
    drawn = plots(folder)
    for path in entries():
        replant(path, caption="\ud800", svg=json.loads(path.read_text())["svg"] + "\ud800")
    again = report(folder)
    assert plots(folder) == drawn
    assert "ignored (it holds text that is not valid Unicode): drawn again" in again.stderr
    assert all(line.startswith("attrib-audit: warning: ") for line in again.stderr.strip().splitlines())


def test_a_fifo_as_a_figure_entry_does_not_hang_the_report(folder):
    report(folder)
    first = entries()[0]
    first.unlink()
    os.mkfifo(first)
    done = report(folder)
    assert "not a regular file" in done.stderr or "ignored" in done.stderr
    assert first.is_file()  # replaced by the redrawn entry


def test_a_planted_svg_with_a_script_is_drawn_again_not_copied(folder):
    report(folder)
    drawn = plots(folder)
    for path in entries():
        svg = json.loads(path.read_text())["svg"].replace("</svg>", '<script>alert(1)</script></svg>')
        replant(path, svg=svg)
    again = report(folder)
    assert plots(folder) == drawn and not any("<script" in s for s in plots(folder).values())
    assert "its SVG is not a plain drawing" in again.stderr


def test_an_entry_renamed_to_another_figure_does_not_show_one_plot_twice(folder):
    report(folder)
    drawn = plots(folder)
    assert len(drawn) >= 2
    by_name = {json.loads(p.read_text())["name"]: p for p in entries()}
    names = sorted(by_name)
    replant(by_name[names[0]], name=names[1])  # the first figure now claims the second's file
    again = report(folder)
    assert plots(folder) == drawn
    assert "two figures claimed one file name; every figure drawn again" in again.stderr
    md = (folder / "report.md").read_text()
    assert f"plots/{names[0]}.svg" in md and f"plots/{names[1]}.svg" in md


def test_an_entry_copied_under_another_key_is_not_used(folder):
    report(folder)
    drawn = plots(folder)
    first, second = entries()[:2]
    second.write_text(first.read_text())  # a copy: its key is the first figure's
    again = report(folder)
    assert plots(folder) == drawn and "it holds another figure's key" in again.stderr


# ---- models_check.json -----------------------------------------------------------------------------------------------

def check_lexical() -> dict:
    done = cli("models", "check", "lexical")
    assert done.returncode == 0, done.stderr
    return json.loads(results_path().read_text())


@pytest.mark.parametrize("field,value", [("auroc", "x"), ("ci_low", None), ("auroc", 10 ** 400), ("n", -1),
                                         ("passed", "yes"), ("mean_by_kind", {"supported": "0.3"}),
                                         ("checked_at", "2099-01-01 00:00:00")])
def test_a_sealed_models_check_entry_of_the_wrong_type_is_ignored(field, value):
    """A recomputed digest with `auroc: "x"`, `ci_low: null` or 10**400 made `models list` traceback; a planted
    2099 date showed "last check 2099-01-01: pass"."""
    stored = check_lexical()
    stored["results"]["lexical"][field] = value
    results_path().write_text(sealed_json({k: v for k, v in stored.items() if k != "digest"}))
    done = cli("models", "list")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    line = next(ln for ln in done.stdout.splitlines() if ln.startswith("lexical "))
    assert "last check" not in line and "2099" not in done.stdout
    assert "the entry for 'lexical' is not a check result; ignored" in done.stderr


def test_a_fifo_as_models_check_json_does_not_hang_list_or_check():
    results_path().parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(results_path())
    done = cli("models", "list")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "models_check.json ignored (NotRegularFile)" in done.stderr
    check = cli("models", "check", "lexical")
    assert check.returncode == 0 and "Traceback" not in check.stderr, check.stderr


def test_a_home_that_is_a_file_still_checks():
    """`models check` raised FileExistsError when $ATTRIB_AUDIT_HOME was a file."""
    home().parent.mkdir(parents=True, exist_ok=True)
    home().write_text("not a folder")
    done = cli("models", "check", "lexical")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "lexical: pass" in done.stdout and "could not keep the check result" in done.stderr


# ---- the judge's GGUF header -----------------------------------------------------------------------------------------

def _s(text: str) -> bytes:
    return struct.pack("<Q", len(text.encode())) + text.encode()


def _gguf(*kv: bytes, n_kv: int | None = None) -> bytes:
    return b"GGUF" + struct.pack("<IQQ", 3, 0, len(kv) if n_kv is None else n_kv) + b"".join(kv)


GOOD = _gguf(_s("general.architecture") + struct.pack("<I", 8) + _s("llama"),
             _s("tokenizer.ggml.tokens") + struct.pack("<IIQ", 9, 8, 2) + _s("<s>") + _s("yes"),
             _s("general.name") + struct.pack("<I", 8) + _s("tiny-judge"))


@pytest.mark.parametrize("blob", [
    GOOD[:40],  # truncated
    _gguf(struct.pack("<Q", 1 << 40) + b"general.name"),  # a key 2^40 bytes long
    _gguf(struct.pack("<Q", (1 << 64) - 1)),  # a key 2^64 - 1 bytes long
    _gguf(_s("a") + struct.pack("<IIQ", 9, 77, 3)),  # an array of an unknown type
    _gguf(_s("a") + struct.pack("<IIQ", 9, 8, 1 << 60)),  # an array of 2^60 strings
    _gguf(_s("a") + struct.pack("<I", 99)),  # an unknown value type
    _gguf(n_kv=(1 << 64) - 1),  # more keys than bytes
    b"GGUF",
], ids=["truncated", "key-2^40", "key-2^64", "array-type", "array-count", "value-type", "n-kv", "magic-only"])
def test_a_corrupt_gguf_header_reads_as_no_name(tmp_path, blob):
    """struct.error, MemoryError, OverflowError and KeyError before."""
    path = tmp_path / "judge.gguf"
    path.write_bytes(blob)
    assert gguf_name(str(path)) == "?"


def test_gguf_name_reads_a_good_header_and_refuses_a_folder_or_fifo(tmp_path):
    path = tmp_path / "judge.gguf"
    path.write_bytes(GOOD)
    assert gguf_name(str(path)) == "tiny-judge"
    assert gguf_name(str(tmp_path)) == "?"  # IsADirectoryError before
    os.mkfifo(tmp_path / "fifo.gguf")
    assert gguf_name(str(tmp_path / "fifo.gguf")) == "?"  # blocked forever before


def test_a_fifo_where_the_judge_gguf_belongs_is_no_model():
    """It counted as an installed judge, so `models check judge` and `models install judge` opened it and hung."""
    from attrib_audit.scorers import pinned
    from attrib_audit.scorers.judge.models import judge_gguf_path
    from attrib_audit.scorers.models import models_dir

    target = models_dir() / "judge" / pinned.JUDGE.target
    target.parent.mkdir(parents=True)
    os.mkfifo(target)
    assert judge_gguf_path() is None
    done = cli("models", "list", timeout=60)
    line = next(ln for ln in done.stdout.splitlines() if ln.startswith("judge "))
    assert done.returncode == 0 and "absent" in line
