"""Chunked encoder scorers (minilm-chunk, bertscore-chunk) and the `window` option, on the packaged MiniLM."""
import numpy as np
import pytest

from attrib_audit.scorers import get_scorer
from attrib_audit.scorers.chunked import aggregate, pair_windows
from attrib_audit.scorers.embedding import count_tokens
from attrib_audit.text.chunk import word_count

CLAIMS = ["The bridge opened in 1932.", "Dogs bark.", "The bridge opened in 1932."]
EVIDENCES = [
    "The harbour bridge was built over eight years. It opened to traffic in March 1932. "
    "Tolls paid for its construction. Trains and cars share the deck. Pedestrians use the eastern walkway. "
    "The arch rises 134 metres above the water. Painting it takes a decade.",
    "Cats sleep all day.",
    "",
]


def test_aggregate_and_pair_windows_by_hand():
    owner = np.array([0, 0, 2, 2, 2])
    v = np.array([0.1, 0.5, -1.0, 0.0, 4.0])
    np.testing.assert_allclose(aggregate(v, owner, 3, "max"), [0.5, np.nan, 4.0])
    np.testing.assert_allclose(aggregate(v, owner, 3, "mean"), [0.3, np.nan, 1.0])
    text = "Alpha beta. Gamma delta eps. Zeta."
    w = pair_windows([text, "x", text], 3, word_count)
    assert w.texts == ["Alpha beta.", "Gamma delta eps.", "Zeta.", "x", "Alpha beta.", "Gamma delta eps.", "Zeta."]
    assert w.owner.tolist() == [0, 0, 0, 1, 2, 2, 2] and w.chunks.tolist() == [3, 1, 3]


@pytest.mark.parametrize("how", ["max", "mean"])
def test_minilm_chunk_is_max_or_mean_of_each_window_scored_by_hand(minilm_path, how):
    chunked = get_scorer("minilm-chunk", window=16, chunk=how)
    plain = get_scorer("minilm", window=16)
    assert chunked.signature != plain.signature and f"chunk={how}" in chunked.signature
    b = chunked.score(CLAIMS, EVIDENCES)
    win = chunked.windows(EVIDENCES)
    assert b.chunks.tolist() == win.chunks.tolist() and b.chunks[0] > 2
    assert b.truncated_tokens.sum() == 0  # every window fits: nothing is cut
    for i in range(len(CLAIMS)):
        wins = [w for w, o in zip(win.texts, win.owner) if o == i]
        per_window = plain.score([CLAIMS[i]] * len(wins), wins)
        assert per_window.truncated_tokens.sum() == 0
        expect = per_window.scores.max() if how == "max" else per_window.scores.mean()
        assert b.scores[i] == pytest.approx(expect, abs=1e-5)
    cut = plain.score(CLAIMS, EVIDENCES)
    tok = plain.model.tokenizer
    assert cut.truncated_tokens[0] == count_tokens(tok, [EVIDENCES[0]])[0] - 16  # the truncated variant cuts


def test_bertscore_chunk_is_max_of_windows_and_window_option(minilm_path):
    chunked = get_scorer("bertscore-chunk", window=16)
    plain = get_scorer("bertscore", window=16)
    assert chunked.signature.startswith("bertscore-chunk:") and "window=16" in plain.signature
    claims, evidences = CLAIMS[:2], EVIDENCES[:2]  # bert_score itself cannot encode an empty reference
    b = chunked.score(claims, evidences)
    win = chunked.windows(evidences)
    assert b.truncated_tokens.sum() == 0 and b.chunks[0] > 2
    for i in range(len(claims)):
        wins = [w for w, o in zip(win.texts, win.owner) if o == i]
        assert b.scores[i] == pytest.approx(plain.score([CLAIMS[i]] * len(wins), wins).scores.max(), abs=1e-5)
    tok = plain.scorer._tokenizer
    assert plain.score(CLAIMS[:1], EVIDENCES[:1]).truncated_tokens[0] == count_tokens(tok, [EVIDENCES[0]])[0] - 16


def test_bad_chunk_and_window_options_are_clear_errors(minilm_path):
    with pytest.raises(ValueError, match="chunk must be one of max, mean"):
        get_scorer("minilm-chunk", chunk="median")
    with pytest.raises(ValueError, match="chunk=mean is an option of minilm-chunk"):
        get_scorer("minilm", chunk="mean")
    with pytest.raises(ValueError, match="exceeds the encoder's 512 positions"):
        get_scorer("minilm", window=4096)


def test_every_window_of_every_pair_goes_to_the_encoder_in_one_call(minilm_path, monkeypatch):
    chunked = get_scorer("minilm-chunk", window=16)
    calls = []
    encode = chunked.model.encode
    monkeypatch.setattr(chunked.model, "encode", lambda texts, **kw: calls.append(list(texts)) or encode(texts, **kw))
    b = chunked.score(CLAIMS * 2, EVIDENCES * 2)
    assert len(calls) == 1  # one call: the encoder batches (and length-sorts) all windows itself
    win = chunked.windows(EVIDENCES)
    assert sorted(calls[0]) == sorted(set(CLAIMS) | set(win.texts))  # claims and windows, each once
    assert b.chunks.tolist() == win.chunks.tolist() * 2


def test_nli_chunk_mean_is_the_mean_of_each_window_scored_by_hand(tmp_path):
    import tiny_hf

    path = tiny_hf.tiny_classifier(tmp_path / "bert3", tiny_hf.NLI3_SHUFFLED, seed=1)
    mean = get_scorer("nli-mnli", path=path, mode="chunk", chunk="mean")
    plain = get_scorer("nli-mnli", path=path)
    assert mean.signature.endswith(":agg=mean") and not get_scorer("nli-mnli", path=path,
                                                                   mode="chunk").signature.endswith("mean")
    long = " ".join(f"Sentence {i} tells of the bridge and the river." for i in range(30))
    claims, evidences = ["The bridge opened in 1932.", "Dogs bark."], [long, "Cats sleep all day."]
    b = mean.score(claims, evidences)
    windows = mean.windows(claims, evidences)
    assert b.chunks.tolist() == [len(w) for w in windows] and b.chunks[0] > 1
    for i, wins in enumerate(windows):
        assert b.scores[i] == pytest.approx(plain.score([claims[i]] * len(wins), list(wins)).scores.mean(), abs=1e-5)
    with pytest.raises(ValueError, match="chunk must be one of max, mean"):
        get_scorer("nli-mnli", path=path, mode="chunk", chunk="min")
