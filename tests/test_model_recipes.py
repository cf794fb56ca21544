"""NLI recipes on tiny models of the real families, and the guards every model scorer shares.

Models are the real config.json files (tests/data/hf_configs) shrunk, with tiny tokenizers of the real
family built in tests/tiny_tokenizers.py; no weights are downloaded.
"""
import json
import tomllib
from pathlib import Path

import pytest
import torch

import tiny_hf
import tiny_tokenizers as tt
from attrib_audit.files.records import to_record
from attrib_audit.scorers import ScorerUnavailable, get_scorer, registry
from attrib_audit.scorers.pairclf import ModelConfigError, model_window

CLAIM = "The cat sat on the mat."
EVIDENCE = "Paris is the capital of France. The cat sat on the mat."
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def toks(tmp_path_factory):
    root = tmp_path_factory.mktemp("toks")
    return {"roberta": tt.roberta_bpe(root / "rob"), "deberta": tt.deberta_unigram(root / "deb")}


def test_nli_mnli_roberta_reads_premise_first_and_entailment_index_2(toks, tmp_path):
    path = tiny_hf.tiny_from_config(tmp_path / "m", "FacebookAI_roberta-large-mnli", toks["roberta"], seed=1)
    s = get_scorer("nli-mnli", path=path)
    assert (s.clf.head.index, s.clf.head.label, s.window) == (2, "ENTAILMENT", 512)
    seen = tiny_hf.record_inputs(s.clf.model)
    b = s.score([CLAIM], [EVIDENCE])
    ids = s.clf.tokenizer(EVIDENCE, CLAIM)["input_ids"]
    assert seen == [ids]
    assert s.clf.tokenizer.convert_ids_to_tokens(ids)[9:14] == ["ance", ".", "Ġ", "The", "Ġcat"]
    assert s.clf.tokenizer.convert_ids_to_tokens(ids)[18:21] == [".", "</s>", "</s>"]  # premise </s></s> hypothesis
    with torch.no_grad():
        expected = torch.softmax(s.clf.model(input_ids=torch.tensor([ids])).logits, -1)[0, 2].item()
    assert b.scores[0] == pytest.approx(expected, abs=1e-6)


def test_nli_fever_default_is_the_papers_deberta_v3_mnli_fever_anli_head(toks, tmp_path):
    """Defect 4: the paper's FEVER NLI is an MNLI/FEVER/ANLI DeBERTa-v3 head."""
    assert "hf download MoritzLaurer/DeBERTa-v3-base-mnli-fever-anli " in registry()["nli-fever"].install
    path = tiny_hf.tiny_from_config(tmp_path / "f", "MoritzLaurer_DeBERTa-v3-base-mnli-fever-anli", toks["deberta"])
    s = get_scorer("nli-fever", path=path)
    assert (s.clf.head.index, s.n_labels) == (0, 3)
    seen = tiny_hf.record_inputs(s.clf.model)
    s.score([CLAIM], [EVIDENCE])
    assert s.clf.tokenizer.convert_ids_to_tokens(seen[0]) == [
        "[CLS]", "▁Paris", "▁is", "▁the", "▁capital", "▁of", "▁France", ".", "▁The", "▁cat", "▁sat", "▁on", "▁the",
        "▁mat", ".", "[SEP]", "▁The", "▁cat", "▁sat", "▁on", "▁the", "▁mat", ".", "[SEP]"]


def test_bart_mnli_is_a_sequence_classifier_not_a_seq2seq_lm(toks, tmp_path):
    """Defect 7: facebook/bart-large-mnli is encoder-decoder but a classifier; it must not be read as an LM."""
    path = tiny_hf.tiny_from_config(tmp_path / "b", "facebook_bart-large-mnli", toks["roberta"], seed=2)
    s = get_scorer("nli-mnli", path=path)
    assert type(s.clf.model).__name__ == "BartForSequenceClassification" and s.clf.head.index == 2
    seen = tiny_hf.record_inputs(s.clf.model)
    b = s.score([CLAIM, "Dogs bark."], [EVIDENCE, "Cats sleep all day."])
    assert seen[0] == s.clf.tokenizer(EVIDENCE, CLAIM)["input_ids"] and 0 <= b.scores.min() <= b.scores.max() <= 1


def test_mpnet_positions_start_after_the_padding_index():
    """Defect 7: all-mpnet-base-v2 has 514 position embeddings for 512 tokens, like RoBERTa."""
    class Tok:
        model_max_length = 10**30

    class Cfg:
        def __init__(self, raw):
            self.__dict__.update(raw)

    assert model_window(Tok(), Cfg(tiny_hf.real_config("sentence-transformers_all-mpnet-base-v2")), 10**6) == 512
    assert model_window(Tok(), Cfg(tiny_hf.real_config("FacebookAI_roberta-large-mnli")), 10**6) == 512
    assert model_window(Tok(), Cfg(tiny_hf.real_config("facebook_bart-large-mnli")), 10**6) == 1024
    assert model_window(Tok(), Cfg(tiny_hf.real_config("lytang_MiniCheck-DeBERTa-v3-Large")), 2048) == 2048


@pytest.mark.parametrize("scorer,config", [("minicheck", "lytang_MiniCheck-RoBERTa-Large"),
                                           ("nli-mnli", "FacebookAI_roberta-large-mnli")])
def test_checkpoint_without_trained_head_is_refused_in_one_line(toks, tmp_path, scorer, config):
    """Defect 5: a base encoder (no classification head) would load with a fresh random head and score noise."""
    path = tiny_hf.tiny_from_config(tmp_path / "base", config, toks["roberta"], architecture="RobertaModel")
    with pytest.raises(ModelConfigError) as exc:
        get_scorer(scorer, path=path)
    msg = str(exc.value)
    assert "\n" not in msg and "freshly initialised" in msg and "classifier" in msg


def test_cross_encoder_without_trained_head_is_refused(toks, tmp_path):
    path = tiny_hf.tiny_from_config(tmp_path / "ce", "cross-encoder_nli-deberta-v3-base", toks["deberta"],
                                    architecture="DebertaV2Model")
    with pytest.raises(ModelConfigError, match="freshly initialised"):
        get_scorer("cross-encoder", path=path)


def test_pyproject_floors_are_the_versions_the_code_needs():
    """Defect 6: transformers 4.56 brought from_pretrained(dtype=), sentence-transformers 6.0 processing_kwargs."""
    from attrib_audit.scorers.hfmodels import MIN_VERSIONS

    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    floors = {d.split(">=")[0]: d.split(">=")[1] for d in deps if ">=" in d}
    assert MIN_VERSIONS == {"transformers": "4.56", "sentence-transformers": "6.0"}
    assert {k: floors[k] for k in MIN_VERSIONS} == MIN_VERSIONS


def test_an_older_transformers_is_named_not_reported_as_missing_weights(toks, tmp_path, monkeypatch):
    from importlib import metadata

    path = tiny_hf.tiny_from_config(tmp_path / "m", "FacebookAI_roberta-large-mnli", toks["roberta"])
    real = metadata.version
    monkeypatch.setattr(metadata, "version", lambda d: "4.40.0" if d == "transformers" else real(d))
    with pytest.raises(ScorerUnavailable) as exc:
        get_scorer("nli-mnli", path=path)
    assert str(exc.value) == ("nli-mnli: needs transformers>=4.56 (installed 4.40.0): "
                              "pip install -U 'transformers>=4.56'")
    monkeypatch.setattr(metadata, "version", lambda d: "5.4.0" if d == "sentence-transformers" else real(d))
    with pytest.raises(ScorerUnavailable, match=r"needs sentence-transformers>=6.0 \(installed 5.4.0\)"):
        get_scorer("cross-encoder", path=path)


def test_hub_code_runs_only_with_trust_remote_code(tmp_path):
    folder = tmp_path / "custom"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({
        "model_type": "internlm2", "architectures": ["InternLM2ForCausalLM"],
        "auto_map": {"AutoConfig": "configuration_internlm2.InternLM2Config",
                     "AutoModelForCausalLM": "modeling_internlm2.InternLM2ForCausalLM"}}))
    for name in ("nli-mnli", "minicheck", "bespoke-minicheck"):
        with pytest.raises(ScorerUnavailable) as exc:
            get_scorer(name, path=str(folder))
        assert "\n" not in str(exc.value) and "pass --trust-remote-code" in str(exc.value)
    with pytest.raises(Exception) as exc:  # allowed: transformers now looks for the (absent) code file
        get_scorer("bespoke-minicheck", path=str(folder), trust_remote_code=True)
    assert "--trust-remote-code" not in str(exc.value)


def test_trust_remote_code_is_a_local_flag_never_read_from_a_spec(tmp_path):
    from attrib_audit.audit.spec import RunSpec
    from attrib_audit.cli import build_parser
    from attrib_audit.cli.convert import local_for, spec_from_args
    from attrib_audit.errors import SpecError

    args = build_parser().parse_args(["audit", "x.jsonl", "--scorers", "lexical,bespoke-minicheck,nli-mnli",
                                      "--trust-remote-code", "--out", str(tmp_path)])
    spec, local = spec_from_args(args)
    assert local.scorer_options == {"bespoke-minicheck": {"trust_remote_code": True},
                                    "nli-mnli": {"trust_remote_code": True}}
    assert all("trust_remote_code" not in c.options for c in spec.scorers)  # so results.json's spec never holds it
    raw = to_record(spec)
    raw["scorers"][1]["options"] = {"trust_remote_code": True}
    with pytest.raises(SpecError, match="--trust-remote-code"):
        RunSpec.from_dict(raw)
    again = build_parser().parse_args(["audit", "--check", str(tmp_path)])  # --check asks again: not given, not trusted
    assert local_for(spec, again).scorer_options == {}
