"""The embedding cache beside the score cache: float32 storage restored as float64, untrusted rows recomputed,
least-recently-used eviction under a byte bound, and every embedding scorer reading it."""
import sqlite3

import numpy as np
import pytest

from attrib_audit.engine.cache import EmbeddingCache, ScoreCache, embeddings_path
from attrib_audit.files.records import to_record

ENC = "enc:test:v1"


def _unit(rng, n, dim=8):
    v = rng.standard_normal((n, dim))
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_vectors_round_trip_as_float32_and_cosines_agree_within_1e_6(tmp_path):
    rng = np.random.default_rng(0)
    texts = [f"text {i}" for i in range(50)]
    vecs = _unit(rng, 50, 384)
    with EmbeddingCache(tmp_path / "e.sqlite") as store:
        store.put_vectors(ENC, texts, vecs, np.arange(50) % 3, np.arange(50) + 10)
        held = store.get_vectors(ENC, texts[::-1] + ["absent"], 384)
    assert held.index.tolist() == list(range(50))  # positions among the texts asked for; "absent" is not held
    back = held.vectors[::-1]
    assert back.dtype == np.float64
    np.testing.assert_array_equal(back, vecs.astype(np.float32).astype(np.float64))  # exactly float32's values
    cos_before = np.einsum("ij,ij->i", vecs[:-1], vecs[1:])
    cos_after = np.einsum("ij,ij->i", back[:-1], back[1:])
    assert np.abs(cos_before - cos_after).max() < 1e-6
    assert held.cut[::-1].tolist() == (np.arange(50) % 3).tolist()
    assert held.tokens[::-1].tolist() == (np.arange(50) + 10).tolist()
    # a float32 vector (what an encoder returns) comes back bit for bit
    f32 = vecs.astype(np.float32).astype(np.float64)
    with EmbeddingCache(tmp_path / "e2.sqlite") as store:
        store.put_vectors(ENC, texts, f32, np.zeros(50, int), np.ones(50, int))
        np.testing.assert_array_equal(store.get_vectors(ENC, texts, 384).vectors, f32)


def test_a_repeated_text_is_found_at_every_position_and_encoders_are_kept_apart(tmp_path):
    v = _unit(np.random.default_rng(1), 2)
    with EmbeddingCache(tmp_path / "e.sqlite") as store:
        store.put_vectors(ENC, ["a", "b"], v, [0, 0], [1, 1])
        held = store.get_vectors(ENC, ["b", "x", "b", "a"], 8)
        assert held.index.tolist() == [0, 2, 3]
        np.testing.assert_array_equal(held.vectors, v.astype(np.float32).astype(np.float64)[[1, 1, 0]])
        assert store.get_vectors("other-encoder", ["a", "b"], 8).index.size == 0
        assert store.get_vectors(ENC, ["a"], 16).index.size == 0  # another dimension is another encoder's vector


@pytest.mark.parametrize("column, value", [
    ("dim", 7), ("dim", "eight"), ("vec", b"\x00" * 31), ("vec", "not bytes"),
    ("vec", np.full(8, np.nan, "<f4").tobytes()),
    ("vec", np.full(8, 3.0, "<f4").tobytes()), ("cut", -1), ("cut", 5), ("tokens", 1.5), ("cut", None),
])
def test_a_bad_row_counts_as_absent_and_is_replaced(tmp_path, column, value):
    path = tmp_path / "e.sqlite"
    v = _unit(np.random.default_rng(2), 2)
    with EmbeddingCache(path) as store:
        store.put_vectors(ENC, ["a", "b"], v, [0, 1], [3, 4])
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA ignore_check_constraints = 1")
    # what another program (or a bit flip) could leave in the file; the table has no CHECKs to refuse it
    try:
        conn.execute(f"UPDATE vectors SET {column} = ? WHERE key = (SELECT MIN(key) FROM vectors)", (value,))
    except sqlite3.IntegrityError:  # NOT NULL columns: write the row without it is impossible, skip to a type error
        conn.execute(f"UPDATE vectors SET {column} = 'x' WHERE key = (SELECT MIN(key) FROM vectors)")
    conn.commit()
    conn.close()
    with EmbeddingCache(path) as store:
        held = store.get_vectors(ENC, ["a", "b"], 8)
        assert held.index.size == 1  # the damaged row is absent, the other intact
        missing = ["a", "b"][1 - int(held.index[0])]
        store.put_vectors(ENC, [missing], v[[1 - int(held.index[0])]], [0], [3])
        assert store.get_vectors(ENC, ["a", "b"], 8).index.tolist() == [0, 1]


def test_least_recently_used_vectors_go_first_when_the_bound_is_passed(tmp_path):
    v = _unit(np.random.default_rng(3), 4)
    with EmbeddingCache(tmp_path / "e.sqlite") as store:
        store.set_max_bytes(3 * 8 * 4)  # room for three 8-dim float32 vectors
        store.put_vectors(ENC, ["a"], v[:1], [0], [1])
        store.put_vectors(ENC, ["b"], v[1:2], [0], [1])
        store.put_vectors(ENC, ["c"], v[2:3], [0], [1])
        assert store.get_vectors(ENC, ["a"], 8).index.size == 1  # reading "a" makes "b" the least recently used
        store.put_vectors(ENC, ["d"], v[3:4], [0], [1])
        held = store.get_vectors(ENC, ["a", "b", "c", "d"], 8)
        assert held.index.tolist() == [0, 2, 3]
        assert sum(u.bytes for u in store.usage()) == 96
        store.set_max_bytes(8 * 4)  # lowering the bound evicts at once
        assert [u.vectors for u in store.usage()] == [1]
        assert store.max_bytes == 32
        assert store.clear() == 1 and store.usage() == []
        assert store.max_bytes == 32  # clearing keeps the bound


def test_a_failed_write_keeps_nothing_of_its_batch(tmp_path):
    v = _unit(np.random.default_rng(4), 2)
    with EmbeddingCache(tmp_path / "e.sqlite") as store:
        with pytest.raises(ValueError):
            store.put_vectors(ENC, ["a", "b", "c"], v, [0, 0, 0], [1, 1, 1])
        store.put_vectors(ENC, ["a", "b"], v, [0, 0], [1, 1])
        with pytest.raises(OverflowError):  # a row the database refuses mid-batch: the whole batch rolls back
            store.put_vectors(ENC, ["c", "d"], v, [0, 2**70], [1, 1])
        assert store.get_vectors(ENC, ["a", "b", "c", "d"], 8).index.tolist() == [0, 1]


def test_the_embedding_cache_sits_beside_the_score_cache_and_closes_with_it(tmp_path):
    assert embeddings_path(tmp_path / "s.sqlite") == tmp_path / "s.embeddings.sqlite"
    assert str(embeddings_path(":memory:")) == ":memory:"
    cache = ScoreCache(tmp_path / "s.sqlite")
    assert not (tmp_path / "s.embeddings.sqlite").exists()  # opened only when an encoder needs it
    store = cache.vectors
    assert cache.vectors is store and store.path == tmp_path / "s.embeddings.sqlite"
    cache.close()
    with pytest.raises(sqlite3.ProgrammingError):
        store.usage()


# ---- the embedding scorers read it (real MiniLM) ----

CLAIMS = ["The cat sat on the mat.", "Paris is the capital of France.", "Water boils at 100 degrees.",
          "The cat sat on the mat."]
EVID = ["A cat was sitting on a mat. It purred. " * 3, "France's capital city is Paris.",
        "At sea level water boils at 100 C. Ice melts at 0 C.", "Dogs bark at night."]


def _count_encoded(monkeypatch, scorer) -> list[str]:
    """Every text the scorer's (shared) sentence-transformers model is asked to encode."""
    seen: list[str] = []
    model = scorer.model
    real = model.encode

    def encode(texts, *a, **k):
        seen.extend(texts)
        return real(texts, *a, **k)
    monkeypatch.setattr(model, "encode", encode)
    return seen


def test_minilm_scores_identically_through_the_cache_and_reads_vectors_back(tmp_path, minilm_path, monkeypatch):
    from attrib_audit.engine import score_pairs
    from attrib_audit.scorers.catalog import get_scorer

    scorer = get_scorer("minilm")
    direct = scorer.score(CLAIMS, EVID)
    seen = _count_encoded(monkeypatch, scorer)
    with ScoreCache(tmp_path / "a.sqlite") as cache:
        first, _ = score_pairs(scorer, CLAIMS, EVID, cache=cache)
    np.testing.assert_array_equal(first.scores, direct.scores)
    np.testing.assert_array_equal(first.truncated_tokens, direct.truncated_tokens)
    np.testing.assert_array_equal(first.input_tokens, direct.input_tokens)
    assert len(seen) == len(set(CLAIMS + EVID))
    assert scorer.vectors is None  # detached when scoring ends: the store closed with its score cache
    # a new score file beside the same vectors (the embeddings file follows the score file's name)
    (tmp_path / "a.embeddings.sqlite").rename(tmp_path / "b.embeddings.sqlite")
    seen.clear()
    with ScoreCache(tmp_path / "b.sqlite") as cache:
        again, st = score_pairs(scorer, CLAIMS, EVID, cache=cache)
    assert st.n_scored == 4 and seen == []  # scored anew from cached vectors, nothing encoded
    np.testing.assert_array_equal(again.scores, direct.scores)
    np.testing.assert_array_equal(again.input_tokens, direct.input_tokens)


def test_minilm_and_blend_in_one_run_cost_one_minilm_pass(tmp_path, minilm_path, monkeypatch):
    from attrib_audit.data.records import PairRecord, PairTable
    from attrib_audit.engine.table import score_table
    from attrib_audit.scorers.catalog import get_scorer

    scorers = {"minilm": get_scorer("minilm"), "blend": get_scorer("blend")}
    expected = {n: s.score(CLAIMS, EVID).scores for n, s in scorers.items()}  # each on its own, as before
    seen = _count_encoded(monkeypatch, scorers["minilm"])

    class Config:
        engine, batch_size, quiet, ray = "local", None, True, None
        cache_path = str(tmp_path / "s.sqlite")

        def factory_options(self, name):
            return {}

    recs = [PairRecord(id=str(i), claim=c, evidence=e, label=i % 2, dataset="d")
            for i, (c, e) in enumerate(zip(CLAIMS, EVID))]
    for order in (("blend", "minilm"), ("minilm", "blend")):
        seen.clear()
        (tmp_path / "s.sqlite").unlink(missing_ok=True)
        (tmp_path / "s.embeddings.sqlite").unlink(missing_ok=True)
        out, _ = score_table(PairTable.from_records(recs), {n: scorers[n] for n in order}, Config())
        assert sorted(seen) == sorted(set(CLAIMS + EVID)), order  # every text once, whichever runs first
        for n in order:
            np.testing.assert_array_equal(out[n].scores, expected[n])


def test_minilm_chunk_after_minilm_encodes_only_windows_not_seen(tmp_path, minilm_path, monkeypatch):
    from attrib_audit.engine import score_pairs
    from attrib_audit.scorers.catalog import get_scorer

    minilm, chunk = get_scorer("minilm", window=16), get_scorer("minilm-chunk", window=16)
    expected = chunk.score(CLAIMS, EVID)
    windows = chunk.windows(EVID).texts
    assert len(set(windows) - set(EVID)) > 0  # the long evidence is split, short ones are their own window
    seen = _count_encoded(monkeypatch, minilm)
    with ScoreCache(tmp_path / "s.sqlite") as cache:
        score_pairs(minilm, CLAIMS, EVID, cache=cache)
        seen.clear()
        out, _ = score_pairs(chunk, CLAIMS, EVID, cache=cache)
    assert sorted(seen) == sorted(set(windows) - set(CLAIMS + EVID))
    np.testing.assert_allclose(out.scores, expected.scores, rtol=0, atol=1e-6)  # other batches: float32 rounding
    np.testing.assert_array_equal(out.chunks, expected.chunks)
    np.testing.assert_array_equal(out.input_tokens, expected.input_tokens)


def test_provenance_semantic_rankers_read_and_fill_the_embedding_cache(tmp_path, minilm_path, monkeypatch):
    from attrib_audit.provenance.diagnostic import ProvenanceConfig, run_provenance
    from attrib_audit.provenance.records import Passage, ProvenanceExample, ProvenanceSet
    from attrib_audit.scorers.catalog import get_scorer

    def ex(i, unit, passages):
        return ProvenanceExample(id=f"e{i}", dataset="toy", question=None, answers=(), units=(unit,),
                                 passages=tuple(Passage(f"p{j}", t) for j, t in enumerate(passages)),
                                 gold=frozenset({"p0"}))

    data = ProvenanceSet([ex(0, "red fox jumps", ["a fox is red", "weather"]),
                          ex(1, "blue whale sings", ["whales sing", "stone"])])
    cfg = ProvenanceConfig(rankers=("minilm", "blend"), confusable_k=0, alphas=(), n_boot=50, quiet=True,
                           cache_path=str(tmp_path / "s.sqlite"))
    seen = _count_encoded(monkeypatch, get_scorer("minilm"))
    first = run_provenance([data], cfg, log=lambda m: None).results
    n_texts = len(seen)
    assert n_texts == 6
    with EmbeddingCache(tmp_path / "s.embeddings.sqlite") as store:
        assert [u.vectors for u in store.usage()] == [6]
    seen.clear()
    again = run_provenance([data], cfg, log=lambda m: None).results
    assert seen == [] and to_record(again.datasets) == to_record(first.datasets)  # as JSON: NaN reads as null


def test_cache_command_shows_bounds_and_clears_the_embedding_cache(tmp_path, capsys):
    from attrib_audit.cli import main

    score_file = tmp_path / "s.sqlite"
    with EmbeddingCache(embeddings_path(score_file)) as store:
        store.put_vectors(ENC, ["a", "b"], _unit(np.random.default_rng(5), 2, 384), [0, 0], [1, 1])
    assert main(["cache", "show", "--cache", str(score_file)]) == 0
    out = capsys.readouterr().out
    assert f"embedding cache {tmp_path / 's.embeddings.sqlite'}" in out
    assert "2 vectors, 0.0 MiB of 256.0 MiB" in out and f"       2 vectors      0.0 MiB  {ENC}" in out
    assert main(["cache", "limit", "0.5", "--cache", str(score_file)]) == 0
    assert "of 0.5 MiB" in capsys.readouterr().out
    assert main(["cache", "clear", "--cache", str(score_file)]) == 0
    assert capsys.readouterr().out.startswith("cleared 2 vectors from ")
    with EmbeddingCache(embeddings_path(score_file)) as store:
        assert store.usage() == [] and store.max_bytes == 2**19
    assert main(["cache", "limit", "-1", "--cache", str(score_file)]) == 2
    assert "cache limit takes a size in MiB >= 0, got -1.0" in capsys.readouterr().err
