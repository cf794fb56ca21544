"""A model the score cache already knows is loaded only for an uncached pair; if it then builds a signature other than
the one the cache recorded for the same identity, the run stops with one line, not a traceback."""
import json

import pytest

from attrib_audit.cli import main
from attrib_audit.data.demo import demo_paths
from attrib_audit.engine.cache import ScoreCache
from attrib_audit.engine.table import DeferredScorer
from attrib_audit.errors import InputError


@pytest.fixture
def pairs(tmp_path):
    """The first 12 rows of the packaged AttributionBench demo file (6 of each label)."""
    src = next(p for p in demo_paths() if p.name == "attributionbench_id.jsonl")
    rows = [json.loads(line) for line in src.read_text(encoding="utf-8").splitlines()]
    picked = [r for r in rows if r["label"] == 1][:6] + [r for r in rows if r["label"] == 0][:6]
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in picked), encoding="utf-8")
    return path, rows


def _audit(data, cache, out):
    return main(["audit", str(data), "--scorers", "minilm", "--cache", str(cache), "--out", str(out),
                 "--n-boot", "50", "--n-perm", "50", "--quiet"])


def test_a_rerun_from_the_cache_loads_no_model_and_a_changed_model_is_one_line(pairs, tmp_path, capsys, monkeypatch):
    from attrib_audit.scorers import embedding

    data, rows = pairs
    cache = tmp_path / "scores.sqlite"
    assert _audit(data, cache, tmp_path / "first") == 0
    loaded = []
    real = embedding.load_sentence_transformer
    monkeypatch.setattr(embedding, "load_sentence_transformer", lambda *a: loaded.append(a) or real(*a))
    assert _audit(data, cache, tmp_path / "rerun") == 0
    assert loaded == []  # every pair came from the cache: the model was never loaded
    first, rerun = (json.loads((tmp_path / d / "results.json").read_text()) for d in ("first", "rerun"))
    assert first["auroc"] == rerun["auroc"]

    store = ScoreCache(str(cache))
    (identity,), = store.conn.execute("SELECT identity FROM signatures").fetchall()  # minilm's, the one scorer run
    store.remember_signature(identity, "minilm:recorded-elsewhere", None)  # as if the identity missed a change
    store.close()
    with data.open("a", encoding="utf-8") as f:  # one new pair: the model has to load for it
        f.write(json.dumps(next(r for r in rows[12:] if r["label"] == 1)) + "\n")
    capsys.readouterr()
    assert _audit(data, cache, tmp_path / "changed") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "minilm" in err and "minilm:recorded-elsewhere" in err and str(cache) in err and "--no-cache" in err
    assert not (tmp_path / "changed").exists()  # nothing written for a run that stopped


def test_the_check_itself_raises_an_input_error_naming_both_signatures():
    deferred = DeferredScorer("lexical", {}, "lexical:not-this-one", None, cache="scores.sqlite")
    with pytest.raises(InputError) as exc:
        deferred.score(["a claim"], ["some evidence"])
    msg = str(exc.value)
    assert "\n" not in msg and "lexical:not-this-one" in msg and "scores.sqlite" in msg
