"""`bertscore-roberta` is bert_score's English default (roberta-large, layer 17, F1, no idf, no rescaling), checked
on a tiny RoBERTa of the real config (18 layers, so layer 17 exists) against BERTScore computed by hand: the
layer-17 hidden states of each side, special tokens dropped, cosine similarity, greedy match, F1 (Zhang et al.,
2020, eq. 1-3, as bert_score 0.3.13 computes it). `bertscore` says it is a MiniLM stand-in.
"""
import pytest
import torch

import tiny_hf
import tiny_tokenizers as tt
from attrib_audit.scorers import get_scorer
from attrib_audit.scorers.base import ScorerUnavailable
from attrib_audit.scorers.catalog import registry

CLAIMS = ["The cat sat on the mat.", "Paris is the capital of France.", "Dogs bark."]
EVIDENCES = ["A cat sat on the mat near the river.", "Paris is the capital and largest city of France.",
             "The bridge crosses the river near the town."]


@pytest.fixture(scope="module")
def tiny_roberta(tmp_path_factory):
    import json

    root = tmp_path_factory.mktemp("bsr")
    tok = tt.roberta_bpe(root / "tok")
    folder = tiny_hf.tiny_from_config(root / "m", "FacebookAI_roberta-large-mnli", tok, seed=11,
                                      architecture="RobertaModel")
    cfg = json.loads((root / "m" / "config.json").read_text())
    cfg["num_hidden_layers"] = 18  # roberta-large has 24; 18 keeps layer 17 while the test stays small
    (root / "m" / "config.json").write_text(json.dumps(cfg))
    from transformers import AutoConfig, RobertaModel

    torch.manual_seed(11)
    RobertaModel(AutoConfig.from_pretrained(folder)).eval().save_pretrained(folder)
    return folder


def by_hand(folder: str, cand: str, ref: str) -> float:
    from transformers import AutoTokenizer, RobertaModel

    tok = AutoTokenizer.from_pretrained(folder)
    model = RobertaModel.from_pretrained(folder).eval()

    def layer17(text: str) -> torch.Tensor:
        ids = tok.encode(text.strip(), add_special_tokens=True, add_prefix_space=True, truncation=True)
        with torch.no_grad():
            h = model(input_ids=torch.tensor([ids]), output_hidden_states=True).hidden_states[17][0]
        h = h[1:-1]  # <s> and </s> carry no weight (bert_score: idf 0 for the special tokens)
        return h / h.norm(dim=-1, keepdim=True)

    c, r = layer17(cand), layer17(ref)
    sim = c @ r.T
    p, rec = sim.max(dim=1).values.mean().item(), sim.max(dim=0).values.mean().item()
    return 2 * p * rec / (p + rec)


def test_bertscore_roberta_is_layer_17_f1_without_idf_or_rescaling(tiny_roberta):
    s = get_scorer("bertscore-roberta", path=tiny_roberta)
    assert (s.num_layers, s.idf, s.rescale, s.window) == (17, False, False, 512)
    assert s.signature.startswith("bertscore-roberta:F1:") and ":layers=17:idf=none:rescale=False:" in s.signature
    b = s.score(CLAIMS, EVIDENCES)
    for i, (c, e) in enumerate(zip(CLAIMS, EVIDENCES)):
        assert b.scores[i] == pytest.approx(by_hand(tiny_roberta, c, e), abs=1e-5)


def test_bertscore_roberta_resolves_path_then_env_then_hub(tiny_roberta, monkeypatch):
    from attrib_audit.scorers.bertscore import resolve_bertscore_roberta

    monkeypatch.setenv("ATTRIB_AUDIT_BERTSCORE_ROBERTA", tiny_roberta)
    assert resolve_bertscore_roberta().origin == "env:ATTRIB_AUDIT_BERTSCORE_ROBERTA"
    assert resolve_bertscore_roberta(tiny_roberta).origin == "path"
    monkeypatch.delenv("ATTRIB_AUDIT_BERTSCORE_ROBERTA")
    assert resolve_bertscore_roberta().location == "roberta-large"
    with pytest.raises(ScorerUnavailable, match="bertscore-roberta: path '/no/such/dir' does not exist"):
        get_scorer("bertscore-roberta", path="/no/such/dir")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr("attrib_audit.scorers.resolve._hub_cached", lambda _id: False)  # not in the HF cache
    with pytest.raises(ScorerUnavailable, match="roberta-large") as exc:
        get_scorer("bertscore-roberta")
    assert "\n" not in str(exc.value)


def test_models_list_says_what_each_bertscore_is():
    specs = registry()
    assert "stand-in" in specs["bertscore"].description and "MiniLM-L6 layer 4" in specs["bertscore"].description
    assert "roberta-large layer 17" in specs["bertscore-roberta"].description
    assert set(specs["bertscore-roberta"].option_names()) == {"path", "device", "window"}
