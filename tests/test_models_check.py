"""`models check NAME`: the packaged known-answer set, the pass rule, the stored last result shown by `models list`,
and the check a long run makes first. A working scorer passes; an inverted plugin, a head read at the wrong label
index and a model fed (claim, evidence) the wrong way round fail."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from attrib_audit.cli import main
from attrib_audit.scorers import get_scorer
from attrib_audit.scorers import knownanswers as ka

INVERTED = textwrap.dedent("""\
    from attrib_audit.scorers.base import ScoreBatch
    from attrib_audit.scorers.lexical import LexicalScorer


    class Inverted:
        name = "inverted"
        signature = "inverted-lexical:v1"

        def score(self, claims, evidences):
            return ScoreBatch.plain(1.0 - LexicalScorer().score(claims, evidences).scores)


    def make_scorer():
        return Inverted()
""")


@pytest.fixture
def inverted_plugin(tmp_path, monkeypatch) -> str:
    (tmp_path / "inverted_plugin.py").write_text(INVERTED)
    monkeypatch.syspath_prepend(str(tmp_path))
    return "inverted_plugin:make_scorer"


def test_the_packaged_set_is_balanced_clustered_and_ours():
    pairs = ka.known_pairs()
    assert len(pairs) == 48 and sum(p.label for p in pairs) == 24
    assert {p.kind for p in pairs if p.label} == {"supported"}
    assert {p.kind for p in pairs if not p.label} == {"contradicted", "not_mentioned"}
    by_group = {}
    for p in pairs:
        by_group.setdefault(p.group, set()).add(p.evidence)
    assert len(by_group) == 16 and all(len(v) == 1 for v in by_group.values())  # one passage per cluster


def test_rule_against_sklearn_and_its_edges():
    pairs = ka.known_pairs()
    y = np.array([p.label for p in pairs])
    rng = np.random.default_rng(3)
    good = y + rng.normal(0, 0.4, y.size)
    r = ka.judge("x", "sig", good, pairs)
    assert r.auroc == pytest.approx(roc_auc_score(y, good)) and r.passed and r.ci_low > 0.5
    assert not ka.judge("x", "sig", -good, pairs).passed  # the same scorer backwards
    assert not ka.judge("x", "sig", np.full(y.size, 0.3), pairs).passed  # a constant: AUROC 0.5
    holes = good.copy()
    holes[:6] = np.nan  # 6 of 48 failed pairs is more than 10%: the check cannot tell
    r = ka.judge("x", "sig", holes, pairs)
    assert r.n_failed == 6 and not r.passed and r.auroc > 0.8


def test_lexical_and_minilm_pass_and_models_list_shows_the_result(capsys):
    assert main(["models", "check", "lexical"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("lexical: pass: AUROC 1.000 [1.000, 1.000] on 48 known pairs") and "rule: pass when" in out
    assert main(["models", "check", "minilm"]) == 0
    line = capsys.readouterr().out.splitlines()[0]
    auc = float(line.split("AUROC ")[1].split()[0])
    assert line.startswith("minilm: pass") and auc >= 0.9
    assert main(["models", "list"]) == 0
    listing = capsys.readouterr().out
    block = listing[listing.index("\nminilm "):].split("\nminilm-chunk")[0]
    assert f"pass, AUROC {auc:.2f}" in block and "on 48 known pairs" in block
    assert "last check" not in listing[listing.index("\nmpnet "):].split("\nmpnet-chunk")[0]  # never checked


def test_an_inverted_plugin_fails_in_one_line(inverted_plugin, capsys):
    assert main(["models", "check", inverted_plugin]) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err
    assert err.startswith(f"attrib-audit: known-answer check failed: {inverted_plugin}: FAIL: AUROC 0.000")
    assert "check its label map, the input order" in err
    assert ka.last_results()[inverted_plugin].passed is False


def test_an_edited_results_file_is_not_trusted(capsys):
    assert main(["models", "check", "lexical"]) == 0
    path = ka.results_path()
    data = json.loads(path.read_text())
    data["results"]["lexical"]["auroc"] = 0.1
    path.write_text(json.dumps(data))
    assert ka.last_results() == {} and not ka.passed_before("lexical", get_scorer("lexical").signature)


def _pairs_file(path: Path, n: int) -> Path:
    with path.open("w") as fh:
        for i in range(n):
            fh.write(json.dumps({"id": f"r{i}", "claim": f"claim number {i} about a topic",
                                 "evidence": f"evidence text {i % 7} on the topic", "label": i % 2}) + "\n")
    return path


def test_a_long_run_checks_its_scorers_first_and_stops_on_a_failure(tmp_path, inverted_plugin, capsys):
    data = _pairs_file(tmp_path / "long.jsonl", ka.LONG_RUN + 50)
    out = tmp_path / "s.parquet"
    assert main(["score", str(data), "--scorers", f"lexical,{inverted_plugin}", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "known-answer check before a long run: lexical: pass" in err
    assert f"known-answer check failed: {inverted_plugin}: FAIL" in err and not out.exists()
    assert set(ka.last_results()) == {"lexical", inverted_plugin}


def test_a_short_or_cached_run_is_not_checked(tmp_path):
    from attrib_audit.engine.gate import check_before_long_run

    short = _pairs_file(tmp_path / "short.jsonl", ka.LONG_RUN)
    assert main(["score", str(short), "--scorers", "lexical", "--out", str(tmp_path / "a.parquet"), "--quiet"]) == 0
    assert ka.last_results() == {}  # not more than LONG_RUN pairs: no check
    long = _pairs_file(tmp_path / "long.jsonl", ka.LONG_RUN + 50)  # its first LONG_RUN pairs are the cached ones
    assert main(["score", str(long), "--scorers", "lexical", "--out", str(tmp_path / "b.parquet"), "--quiet"]) == 0
    assert ka.last_results() == {}  # 1050 pairs, 50 uncached: not a long run
    rows = [json.loads(line) for line in long.read_text().splitlines()]
    claims, evidences = [r["claim"] for r in rows], [r["evidence"] for r in rows]
    check_before_long_run("lexical", get_scorer("lexical"), claims, evidences, cache_path=":memory:", quiet=True)
    assert ka.last_results()["lexical"].passed  # without a cache every pair is new: checked


# ---- a real (tiny) NLI head: trained here on the set so that it works, then broken three ways ----------------

@pytest.fixture(scope="module")
def trained_nli(tmp_path_factory) -> Path:
    """A 2-layer BERT NLI head fitted to the known pairs (premise = evidence, hypothesis = claim), saved with the
    label map roberta-large-mnli uses (CONTRADICTION/NEUTRAL/ENTAILMENT at 0/1/2)."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    from tiny_hf import minilm_tokenizer

    tok = minilm_tokenizer()
    id2label = {0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"}
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=128, id2label=id2label,
                     label2id={v: k for k, v in id2label.items()})
    model = BertForSequenceClassification(cfg)
    pairs = ka.known_pairs()
    enc = tok([p.evidence for p in pairs], [p.claim for p in pairs], padding=True, truncation=True, max_length=128,
              return_tensors="pt")
    target = torch.tensor([{"contradicted": 0, "not_mentioned": 1, "supported": 2}[p.kind] for p in pairs])
    opt = torch.optim.AdamW(model.parameters(), lr=5e-3)
    model.train()
    for _ in range(60):
        model(**enc, labels=target).loss.backward()
        opt.step()
        opt.zero_grad()
    out = tmp_path_factory.mktemp("tiny_nli")
    model.eval().save_pretrained(out)
    tok.save_pretrained(out)
    return out


def _check(capsys, *argv) -> tuple[int, str]:
    rc = main(["models", "check", *argv])
    cap = capsys.readouterr()
    return rc, (cap.out + cap.err).strip()


def test_a_working_head_passes_and_the_same_head_read_at_the_wrong_index_fails(trained_nli, tmp_path, capsys):
    rc, text = _check(capsys, "nli-mnli", "--model-path", f"nli-mnli={trained_nli}")
    assert rc == 0 and text.startswith("nli-mnli: pass"), text
    wrong = tmp_path / "wrong_index"
    wrong.mkdir()
    for f in trained_nli.iterdir():
        (wrong / f.name).write_bytes(f.read_bytes())
    cfg = json.loads((wrong / "config.json").read_text())
    cfg["id2label"] = {"0": "ENTAILMENT", "1": "NEUTRAL", "2": "CONTRADICTION"}  # a label map off by the ends
    cfg["label2id"] = {v: int(k) for k, v in cfg["id2label"].items()}
    (wrong / "config.json").write_text(json.dumps(cfg))
    rc, text = _check(capsys, "nli-mnli", "--model-path", f"nli-mnli={wrong}")
    assert rc == 1 and "known-answer check failed: nli-mnli: FAIL" in text and "\n" not in text


def test_the_same_head_fed_claim_first_fails(trained_nli):
    scorer = get_scorer("nli-mnli", path=str(trained_nli))

    class Swapped:
        name, signature = "swapped", "swapped:" + scorer.signature

        def score(self, claims, evidences):  # premise = claim, hypothesis = evidence: the order defect 1 fixed
            return scorer.score(evidences, claims)

    assert ka.check_scorer(scorer, "nli-mnli").passed
    swapped = ka.check_scorer(Swapped(), "swapped")
    assert not swapped.passed, swapped.line()


@pytest.mark.parametrize("seed", [0, 1])
def test_a_random_head_in_either_label_order_is_caught(tmp_path, seed):
    """Untrained tiny heads score noise with some structure: seed 1 read at the shuffled index reaches AUROC ~0.67
    with a CI above 0.5, which the AUROC floor of the rule still refuses."""
    from tiny_hf import NLI3, NLI3_SHUFFLED, tiny_classifier

    for i, labels in enumerate((NLI3, NLI3_SHUFFLED)):
        path = tiny_classifier(tmp_path / str(i), labels, seed=seed)
        result = ka.check_scorer(get_scorer("nli-mnli", path=path), "nli-mnli")
        assert not result.passed and result.auroc < ka.MIN_AUROC, result.line()


@pytest.mark.parametrize("content", ["[]", '{"results": []}', '"x"'])
def test_a_results_file_of_another_shape_is_ignored_with_a_warning(content):
    """Not a sealed object of results: ignored, with one warning line saying the checks run again."""
    ka.results_path().parent.mkdir(parents=True, exist_ok=True)
    ka.results_path().write_text(content)
    with pytest.warns(UserWarning, match="not a sealed file of check results"):
        assert ka.last_results() == {}
