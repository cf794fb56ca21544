"""Regenerate the report fixtures in tests/data from the code and in-repo inputs only.

    PYTHONPATH=src python tests/data/regenerate.py           # rewrite them (runs MiniLM: minutes on a CPU)
    PYTHONPATH=src python tests/data/regenerate.py --check   # the same run; list what differs, exit 1 if anything

Each fixture is one producer's output, made by the command its README line names:
- report_transfer_demo.json / report_agreement_minilm_human.json: `attrib-audit demo --scorers lexical,minilm
  --n-boot 200`, then `agree --a minilm --b human --n-boot 200` on that folder;
- report_probe_example.json: `attrib-audit probe compare --n-boot 200` (the shipped example);
- report_provenance_wice.json: `attrib-audit provenance tests/data/wice_provenance.jsonl --rankers
  lexical,minilm,blend,eq1 --confusable 5 --seeds 4 --n-boot 200`.
MiniLM's demo scores are saved beside them (demo_minilm_scores.json) so tests/test_fixtures.py can rerun
the demo pipeline from a replayed cache in seconds. Machine-specific values (absolute paths, platform,
Python version) are normalised so a fixture made on one machine matches a run on another.

Fixtures hold numbers, not library versions: a scorer signature's library part (`transformers=5.24.0`) is
saved as `transformers=<version>`, the versions the fixtures were made with go to fixture_versions.json, and
numbers compare within NUMBER_TOLERANCE (MiniLM scores rescored live within SCORE_TOLERANCE). When a new
release moves a number beyond that, the failure names the libraries that changed since (`advice`).
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import re
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

DATA = Path(__file__).resolve().parent
MINILM_SCORES = DATA / "demo_minilm_scores.json"
VOLATILE = ("platform", "python")  # keys of a `tool` block that name the machine, not the result
DROPPED = ("digest", "run_id")  # a hash over the un-normalised file; a fresh uuid per run
VERSIONS = DATA / "fixture_versions.json"
# what turns inputs into the fixtures' numbers; the first four appear inside scorer signatures
LIBRARIES = ("sentence-transformers", "transformers", "torch", "bert-score", "tokenizers", "numpy", "scipy",
             "pandas", "pyarrow")
_LIBRARY_PART = re.compile(r"\b(" + "|".join(map(re.escape, LIBRARIES[:4])) + r")=[^,:\]\s]+")
NUMBER_TOLERANCE = 1e-9  # absolute: float drift of a reordered sum, never a changed draw or score
SCORE_TOLERANCE = 1e-5  # MiniLM rescored live on another BLAS/kernel against its saved scores


def library_versions() -> dict[str, str]:
    from importlib import metadata

    out = {}
    for name in LIBRARIES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "none"
    return out


def advice() -> str:
    """Which libraries differ from the ones the fixtures were made with, and how to regenerate."""
    saved = json.loads(VERSIONS.read_text()) if VERSIONS.exists() else {}
    now = library_versions()
    moved = [f"{k} {saved[k]} -> {v}" for k, v in now.items() if k in saved and saved[k] != v]
    return ("libraries changed since the fixtures were made: " + ", ".join(moved) if moved else
            "no library changed since the fixtures were made (the code did)") + \
        "; if the new numbers are right, run `PYTHONPATH=src python tests/data/regenerate.py` and commit tests/data"


def mask_versions(text: str) -> str:
    """A signature without its library versions: `...:transformers=<version>,torch=<version>:...`."""
    return _LIBRARY_PART.sub(lambda m: f"{m.group(1)}=<version>", text)


def _roots() -> dict[str, str]:
    import attrib_audit

    return {str(Path(attrib_audit.__file__).resolve().parent): "<attrib_audit>", str(DATA.parent): "<tests>"}


def normalise(obj: Any, roots: dict[str, str] | None = None) -> Any:
    """Plain JSON with machine-specific paths and tool fields replaced by placeholders."""
    roots = roots if roots is not None else _roots()
    if isinstance(obj, dict):
        return {k: ("<machine>" if k in VOLATILE and "version" in obj else normalise(v, roots)) for k, v in obj.items()
                if k not in DROPPED}
    if isinstance(obj, list):
        return [normalise(v, roots) for v in obj]
    if isinstance(obj, str):
        for root, mark in roots.items():
            if obj.startswith(root + "/"):
                return mark + obj[len(root):]
        return mask_versions(obj)
    return obj


def _cli(argv: list[str]) -> None:
    from attrib_audit.cli import main

    with contextlib.redirect_stdout(io.StringIO()):
        rc = main(argv)
    if rc:
        raise RuntimeError(f"attrib-audit {' '.join(argv)} exited {rc}")


def minilm_signature() -> str:
    from attrib_audit.scorers import get_scorer

    return get_scorer("minilm").signature


def demo_keys() -> list[str]:
    from attrib_audit.data import load_demo
    from attrib_audit.engine.cache import pair_key

    table = load_demo()
    return [pair_key(c, e) for c, e in zip(table.claims, table.evidences)]


def replay_minilm(cache: Path) -> None:
    """Fill a score cache with the saved MiniLM demo scores under today's signature, so the demo run scores
    nothing anew. Only the library versions may differ from the saved signature: the scores themselves are
    checked against a live rescoring by tests/test_fixtures.py, within SCORE_TOLERANCE."""
    import numpy as np

    from attrib_audit.engine.cache import ScoreCache
    from attrib_audit.scorers.base import ScoreBatch

    saved = json.loads(MINILM_SCORES.read_text())
    signature = minilm_signature()
    if mask_versions(signature) != saved["signature"]:
        raise RuntimeError(f"MiniLM's recipe changed: {MINILM_SCORES.name} holds {saved['signature']!r}, the scorer "
                           f"now signs {mask_versions(signature)!r}; run tests/data/regenerate.py")
    keys = list(saved["rows"])
    cols = np.array([saved["rows"][k] for k in keys], dtype=np.float64).T
    with ScoreCache(cache) as c:
        c.put(signature, keys, ScoreBatch(scores=cols[0], truncated_tokens=cols[1], input_tokens=cols[2],
                                          chunks=cols[3], failures=[None] * len(keys)))


def save_minilm(cache: Path) -> dict:
    """The MiniLM rows the demo run left in its cache: pair key → [score, truncated, input tokens, chunks]."""
    from attrib_audit.engine.cache import ScoreCache

    sig, keys = minilm_signature(), demo_keys()
    with ScoreCache(cache) as c:
        found = c.get(sig, keys)
    return {"signature": sig, "rows": {k: list(found[k][:4]) for k in keys}}


def demo_fixtures(work: Path, replay: bool) -> dict[str, dict]:
    cache = work / "scores.sqlite"
    if replay:
        replay_minilm(cache)
    out = work / "demo"
    _cli(["demo", "--scorers", "lexical,minilm", "--n-boot", "200", "--out", str(out), "--cache", str(cache),
          "--quiet"])
    results = json.loads((out / "results.json").read_text())
    if replay:
        fresh = {s["scorer"]: s["n_scored"] for s in results["scorers"]}
        if fresh.get("minilm"):
            raise RuntimeError(f"{fresh['minilm']} MiniLM scores were not in {MINILM_SCORES.name} (signature "
                               "changed?): run tests/data/regenerate.py")
    _cli(["agree", "--results", str(out), "--a", "minilm", "--b", "human", "--n-boot", "200"])
    agreement = json.loads((out / "agreement.json").read_text())["pairs"][0]
    made = {"report_transfer_demo.json": results["transfer"], "report_agreement_minilm_human.json": agreement}
    if not replay:
        made[MINILM_SCORES.name] = save_minilm(cache)
    return made


def probe_fixture(work: Path) -> dict[str, dict]:
    _cli(["probe", "compare", "--n-boot", "200", "--out", str(work / "probe")])
    return {"report_probe_example.json": json.loads((work / "probe" / "probe.json").read_text())}


PROVENANCE_RANKERS = "lexical,minilm,blend,eq1"


def provenance_fixture(work: Path, rankers: str = PROVENANCE_RANKERS) -> dict[str, dict]:
    out = work / "provenance"
    _cli(["provenance", str(DATA / "wice_provenance.jsonl"), "--rankers", rankers, "--confusable", "5", "--seeds",
          "4", "--n-boot", "200", "--out", str(out), "--cache", str(work / "prov.sqlite"), "--quiet"]
         + ([] if "minilm" in rankers.split(",") else ["--alpha-step", "0"]))
    return {"report_provenance_wice.json": json.loads((out / "provenance.json").read_text())}


PRODUCERS: dict[str, Callable[[Path], dict[str, dict]]] = {
    "demo": lambda work: demo_fixtures(work, replay=False),
    "probe": probe_fixture,
    "provenance": provenance_fixture,
}


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def diff(a: Any, b: Any, path: str = "", tolerance: float = NUMBER_TOLERANCE) -> list[str]:
    """Where two JSON values differ (a: saved, b: regenerated); numbers within `tolerance` are equal."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = [f"{path}.{k}: only {'regenerated' if k in b else 'saved'}" for k in sorted(set(a) ^ set(b))]
        return out + [d for k in sorted(set(a) & set(b)) for d in diff(a[k], b[k], f"{path}.{k}", tolerance)]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} entries saved, {len(b)} regenerated"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in diff(x, y, f"{path}[{i}]", tolerance)]
    if _number(a) and _number(b) and math.isclose(a, b, rel_tol=0.0, abs_tol=tolerance):
        return []
    return [] if a == b else [f"{path}: saved {a!r}, regenerated {b!r}"]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--check", action="store_true", help="compare with the saved fixtures instead of writing them")
    p.add_argument("only", nargs="*", help=f"producers to run: {', '.join(PRODUCERS)} (default: all)")
    args = p.parse_args(argv)
    unknown = sorted(set(args.only) - set(PRODUCERS))
    if unknown:
        p.error(f"unknown producer(s) {', '.join(unknown)}; choose from {', '.join(PRODUCERS)}")
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.only or PRODUCERS:
            for fixture, value in PRODUCERS[name](Path(tmp) / name).items():
                value = normalise(json.loads(json.dumps(value)))
                path = DATA / fixture
                if args.check:
                    problems = diff(json.loads(path.read_text()), value) if path.exists() else ["missing"]
                    bad += bool(problems)
                    print(f"{fixture}: " + ("matches" if not problems else "DIFFERS\n  " + "\n  ".join(problems[:20])))
                else:
                    path.write_text(json.dumps(value, indent=1, ensure_ascii=False, allow_nan=False) + "\n")
                    print(f"wrote {path}")
    if bad:
        print(advice())
    elif not args.check and (not args.only or "demo" in args.only):  # the versions MiniLM's scores were made with
        VERSIONS.write_text(json.dumps(library_versions(), indent=1) + "\n")
        print(f"wrote {VERSIONS}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
