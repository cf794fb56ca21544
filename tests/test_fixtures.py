"""The report fixtures in tests/data are what tests/data/regenerate.py makes from today's code.

A producer whose output layout or numbers change makes these fail until the fixtures are regenerated,
so the report tests never pass on a stale layout. MiniLM's demo scores are replayed from a saved cache
(a spread of them rescored live); provenance is rerun with the lexical ranker only, which reproduces
every part of the saved file that does not need a neural model.
"""
import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

DATA = Path(__file__).parent / "data"
_spec = importlib.util.spec_from_file_location("regenerate", DATA / "regenerate.py")
regen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(regen)


def saved(name: str):
    return json.loads((DATA / name).read_text())


def made(value):
    return regen.normalise(json.loads(json.dumps(value)))


def same(name: str, value) -> None:
    """The saved fixture and a rerun agree within regen.NUMBER_TOLERANCE, or the failure says what moved and why."""
    problems = regen.diff(saved(name), made(value))
    assert problems == [], f"{name} differs from a rerun: {problems[:5]}; {regen.advice()}"


def test_demo_transfer_and_agreement_fixtures_match_a_rerun(tmp_path):
    for name, value in regen.demo_fixtures(tmp_path, replay=True).items():
        same(name, value)


def test_saved_minilm_scores_are_what_minilm_computes(minilm_path):
    from attrib_audit.data import load_demo
    from attrib_audit.engine.cache import pair_key
    from attrib_audit.scorers import get_scorer

    rows = saved(regen.MINILM_SCORES.name)
    scorer = get_scorer("minilm")
    assert rows["signature"] == regen.mask_versions(scorer.signature), "MiniLM's recipe changed: regenerate"
    table = load_demo().take(np.arange(0, 400, 40))
    live = scorer.score(table.claims, table.evidences)
    want = np.array([rows["rows"][pair_key(c, e)] for c, e in zip(table.claims, table.evidences)])
    moved = float(np.max(np.abs(live.scores - want[:, 0])))
    assert moved <= regen.SCORE_TOLERANCE, (f"MiniLM's demo scores moved by up to {moved:.2e}, beyond "
                                            f"{regen.SCORE_TOLERANCE:g}; {regen.advice()}")
    np.testing.assert_array_equal(live.truncated_tokens, want[:, 1])


def test_a_library_that_moves_a_number_is_named_with_the_way_to_regenerate(tmp_path, monkeypatch):
    versions = tmp_path / "fixture_versions.json"
    versions.write_text(json.dumps({**regen.library_versions(), "transformers": "0.0.1"}))
    monkeypatch.setattr(regen, "VERSIONS", versions)
    text = regen.advice()
    assert f"transformers 0.0.1 -> {regen.library_versions()['transformers']}" in text
    assert "tests/data/regenerate.py" in text
    assert regen.diff({"auroc": 0.8}, {"auroc": 0.8 + regen.NUMBER_TOLERANCE / 2}) == []
    assert regen.diff({"auroc": 0.8}, {"auroc": 0.8 + 10 * regen.NUMBER_TOLERANCE}) != []
    sig = "minilm:cosine:weights=ab:sentence-transformers=6.3.0,transformers=5.24.0,torch=2.13.0+cpu:max_seq=256:v1"
    assert regen.mask_versions(sig) == ("minilm:cosine:weights=ab:sentence-transformers=<version>,"
                                        "transformers=<version>,torch=<version>:max_seq=256:v1")


def test_probe_fixture_matches_a_rerun(tmp_path):
    ((name, value),) = regen.probe_fixture(tmp_path).items()
    assert regen.diff(saved(name), made(value)) == []


def lexical_part(prov: dict) -> dict:
    """The saved provenance file as a lexical-only run writes it: other rankers, the α sweep and encoders left out."""
    def keep(obj, key=None):
        if isinstance(obj, dict):
            if key in ("rankers", "summary", "signatures"):
                return {k: keep(v, k) for k, v in obj.items() if k == "lexical"}
            return {k: keep(v, k) for k, v in obj.items() if k != "alpha_sweep"}
        if isinstance(obj, list):
            return [keep(v) for v in obj]
        return obj

    out = keep(prov)
    out["config"]["rankers"] = ["lexical"]
    out["embedding_truncation"] = {}
    return out


def test_provenance_fixture_matches_a_lexical_rerun(tmp_path):
    ((name, value),) = regen.provenance_fixture(tmp_path, rankers="lexical").items()
    full = saved(name)
    assert set(full["config"]["rankers"]) == set(regen.PROVENANCE_RANKERS.split(","))
    assert regen.diff(lexical_part(full), made(value)) == []


def test_regenerate_normalises_machine_paths_and_reports_differences():
    roots = {"/x/pkg": "<attrib_audit>"}
    assert regen.normalise({"tool": {"version": "1", "platform": "Linux-a"}, "p": ["/x/pkg/f.jsonl", "/y/f"]},
                           roots) == {"tool": {"version": "1", "platform": "<machine>"},
                                      "p": ["<attrib_audit>/f.jsonl", "/y/f"]}
    assert regen.diff({"a": [1, 2], "b": 1}, {"a": [1, 3], "c": 1}) == [
        ".b: only saved", ".c: only regenerated", ".a[1]: saved 2, regenerated 3"]
    with pytest.raises(SystemExit):
        regen.main(["nosuch"])
