"""`attrib-audit threshold` end to end: on an audit folder and on a labelled file, weighted, the transfer matrix
against a loop over the saved scores, one clear line per slice that cannot be certified, thresholds.json's model
(round trip, seal), the report section, reproducibility, and `plan` giving the same label counts."""
from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
from dataclasses import fields
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from attrib_audit.audit.check import diff
from attrib_audit.audit.thresholds import (
    AuditRef,
    ThresholdEntry,
    ThresholdOptions,
    ThresholdSource,
    ThresholdsResults,
    compute_thresholds,
    read_thresholds,
    scored_from_results,
    slice_data,
    to_json,
)
from attrib_audit.cli import main
from attrib_audit.data import load_pairs
from attrib_audit.data.demo import demo_paths
from attrib_audit.data.origin import PairsFile
from attrib_audit.errors import InputError
from attrib_audit.files.jsonfile import is_sealed, sealed_json
from attrib_audit.files.records import to_record
from attrib_audit.report import fmt
from attrib_audit.report.build import build_report
from attrib_audit.scorers import get_scorer
from attrib_audit.stats.threshold import Target, certify, naive_threshold
from attrib_audit.validate.plan import GatePlan, PlanOptions, plan

FP10 = ["--max-false-pass", "0.1"]


def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(list(argv))
    return code, out.getvalue()


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    """`attrib-audit demo` with lexical only (both constructs, eight slices), then `threshold --results` on it."""
    folder = tmp_path_factory.mktemp("demo") / "demo"
    code, _ = run("demo", "--scorers", "lexical", "--n-boot", "50", "--n-perm", "100", "--no-cache", "--quiet",
                  "--out", str(folder))
    assert code == 0
    code, out = run("threshold", "--results", str(folder), *FP10, "--n-boot", "300", "--quiet")
    assert code == 0 and "thresholds: " in out
    return folder


def entries(folder: Path) -> dict[tuple[str, str], dict]:
    return {(e["scorer"], e["slice"]): e for e in to_record(read_thresholds(folder))["entries"]}


# --- on an audit folder: the numbers against loops over its saved scores ------------------------------------------

def test_thresholds_of_an_audit_folder_are_certify_and_naive_on_its_saved_scores(demo):
    pairs, _ = scored_from_results(demo)
    got = entries(demo)
    assert len(got) == 8 and {e["construct"] for e in got.values()} == {"attribution", "boundary-dialogue"}
    for (name, sl), e in got.items():
        data, n_failed = slice_data(pairs, name, sl)
        assert n_failed == e["n_failed"] == 0 and e["n"] == data.n
        cert, naive = certify(data, Target("false_pass", 0.1), 0.1), naive_threshold(data, Target("false_pass", 0.1))
        assert (e["certified_threshold"], e["naive_threshold"]) == (cert.threshold, naive.threshold)
        assert e["unit"] == ("group" if sl.startswith("attributionbench") else "pair")  # AttributionBench: questions
    # the demo certifies on BEGIN's larger slices and says why not on AttributionBench's (too few question groups)
    assert got[("lexical", "begin:wow/doha")]["certified_threshold"] is not None
    assert got[("lexical", "attributionbench:LFQA")]["certified_reason"].startswith("too few labels: 4 groups")


def _rates_by_loop(s, y, w, t):
    passed = s >= t
    fp = (w * (passed & (y == 0))).sum() / (w * (y == 0)).sum()
    prec = (w * (passed & (y == 1))).sum() / (w * passed).sum() if passed.any() else np.nan
    return fp, prec


def test_transfer_matrix_against_a_loop_over_the_saved_scores(demo):
    frame = pd.read_parquet(demo / "scores.parquet")
    seen = 0
    for (_, sl), e in entries(demo).items():
        assert e["transfer"] is not None, e["transfer_reason"]
        assert e["transfer"]["slices"] == sorted(s for s in frame["slice"].unique()
                                                 if s.split(":")[0] == sl.split(":")[0])
        for which in ("certified", "naive"):
            t = e[f"{which}_threshold"]
            cells = e["transfer"][which]
            assert len(cells) == (0 if t is None else len(e["transfer"]["slices"]))
            for c in cells:
                part = frame[frame["slice"] == c["applied_to"]]
                s, y = part["lexical"].to_numpy(), part["label"].to_numpy()
                fp, prec = _rates_by_loop(s, y, np.ones(len(s)), t)
                assert (c["fitted_on"], c["threshold"], c["in_sample"]) == (sl, t, c["applied_to"] == sl)
                assert c["false_pass"]["estimate"] == pytest.approx(fp, abs=1e-12)
                assert c["catch"]["estimate"] == pytest.approx(1 - fp, abs=1e-12)
                if np.isfinite(prec):
                    assert c["precision"]["estimate"] == pytest.approx(prec, abs=1e-12)
                lo, hi = c["false_pass"]["ci_low"], c["false_pass"]["ci_high"]
                assert c["broken"] == (lo > 0.1)
                if c["applied_to"].startswith("begin"):  # one pair per group: the exact Clopper–Pearson interval
                    k, n = int(((s >= t) & (y == 0)).sum()), int((y == 0).sum())
                    ci = sps.binomtest(k, n).proportion_ci(0.95, method="exact")
                    assert (lo, hi) == pytest.approx((ci.low, ci.high), abs=1e-9)
                seen += 1
    assert seen > 40


def test_held_out_rates_are_cross_fitted_and_in_sample_naive_meets_the_target(demo):
    for e in entries(demo).values():
        assert e["in_sample"]["naive"]["false_pass"]["estimate"] <= 0.1 + 1e-12
        h = e["held_out"]
        assert h["folds"] == min(5, e["n_groups"]) == len(h["fold_thresholds"])  # whole groups per fold
        assert h["naive_folds"] == sum(v is not None for _, v in h["fold_thresholds"])
        assert (h["naive"]["n"] == e["n"]) == (h["naive_folds"] == h["folds"])  # a fold without one is left out
        if e["certified_threshold"] is not None and h["certified"]:
            assert h["certified"]["false_pass"]["ci_low"] <= h["certified"]["false_pass"]["estimate"]


def test_the_terminal_leads_with_one_line_per_slice_and_verbose_prints_the_matrices(demo, tmp_path):
    folder = tmp_path / "copy"
    shutil.copytree(demo, folder)
    code, out = run("threshold", "--results", str(folder), *FP10, "--n-boot", "100", "--quiet")
    lines = out.splitlines()
    assert code == 0 and lines[0].startswith("Deployable thresholds (pass when score ≥ t): false-pass ≤ 0.1")
    for sl in ("AttributedQA", "ExpertQA", "LFQA", "Stanford-GenSearch", "wow/ctrl", "wow/doha", "wow/gpt2", "wow/t5"):
        assert sum(re.match(rf"\s+{sl}\s+lexical\s", line) is not None for line in lines) == 1  # its table row
    assert sum(line.startswith("  LFQA (lexical): too few labels: 4 groups") for line in lines) == 1
    assert "transfer matrix, lexical" not in out and "fitted on \\ applied to" not in out
    code, out = run("threshold", "--results", str(folder), *FP10, "--n-boot", "100", "--quiet", "-v")
    assert code == 0 and "transfer matrix, lexical" in out and "fitted on \\ applied to" in out and "ECE" in out


# --- on a labelled file, weighted -----------------------------------------------------------------------------------

def test_a_labelled_file_scored_here_gives_the_entries_of_its_audit_folder(tmp_path):
    ab = str(demo_paths()[0])
    flags = ["--scorers", "lexical", "--construct", "attribution", "--slice-by", "source", "--no-cache", "--quiet"]
    assert run("audit", ab, *flags, "--n-boot", "30", "--n-perm", "30", "--out", str(tmp_path / "audit"))[0] == 0
    assert run("threshold", "--results", str(tmp_path / "audit"), *FP10, "--n-boot", "200", "--quiet")[0] == 0
    code, out = run("threshold", ab, *flags, *FP10, "--n-boot", "200", "--out", str(tmp_path / "direct"))
    assert code == 0 and "construct attribution (unit of exchangeability: group)" in out
    ra, rb = read_thresholds(tmp_path / "audit"), read_thresholds(tmp_path / "direct")
    assert ra.source.results is not None and ra.source.results.folder == str(tmp_path / "audit")
    assert rb.source.data is not None and isinstance(rb.source.data[0], PairsFile) and rb.source.unavailable == []
    a, b = to_record(ra), to_record(rb)
    assert b["source"]["data"][0]["sha256"] and b["source"]["scorers"]["lexical"].startswith("lexical")
    assert a["entries"] == b["entries"] and len(a["entries"]) == 4
    raw = json.loads((tmp_path / "direct" / "thresholds.json").read_text())
    raw["source"]["data"][0]["rows"] = "200"  # a hand edit: one line naming the file and key
    (tmp_path / "direct" / "thresholds.json").write_text(sealed_json(raw))
    with pytest.raises(InputError) as err:
        read_thresholds(tmp_path / "direct")
    assert str(err.value) == (f"{tmp_path / 'direct' / 'thresholds.json'}: key 'source.data[0].rows': expected an "
                              "integer, got a string")


def test_a_weighted_sample_uses_its_weights_throughout(tmp_path):
    rows = [json.loads(line) for line in demo_paths()[0].read_text().splitlines()]
    pi = np.resize([0.2, 0.5, 1.0, 0.25], len(rows))
    sampled = tmp_path / "sampled.jsonl"
    sampled.write_text("".join(json.dumps({**r, "inclusion_prob": float(p)}) + "\n" for r, p in zip(rows, pi)))
    flags = ["--scorers", "lexical", "--construct", "attribution", "--no-cache", "--quiet", "--n-boot", "200"]
    code, out = run("threshold", str(sampled), *flags, "--min-precision", "0.8", "--out", str(tmp_path / "w"), "-v")
    assert code == 0 and "weighted" in out
    th = to_record(read_thresholds(tmp_path / "w"))
    (e,) = th["entries"]
    assert e["weighted"] and "Horvitz–Thompson" in e["assumption"] and any("Horvitz" in n for n in th["notes"])
    table = load_pairs([str(sampled)])
    s = get_scorer("lexical").score(table.claims, table.evidences).scores
    y, w = table.labels.astype(int), 1.0 / pi
    t = e["naive_threshold"]
    fp, prec = _rates_by_loop(s, y, w, t)
    assert e["in_sample"]["naive"]["precision"]["estimate"] == pytest.approx(prec, abs=1e-12) and prec >= 0.8
    assert e["in_sample"]["naive"]["false_pass"]["estimate"] == pytest.approx(fp, abs=1e-12)
    assert e["in_sample"]["naive"]["precision"]["method"] == "clustered-bootstrap-percentile"
    # the naive threshold is the loosest whose weighted in-sample precision meets the target
    looser = [u for u in np.unique(s) if u < t]
    assert all(_rates_by_loop(s, y, w, u)[1] < 0.8 for u in looser[-3:])
    # an audit of the sample keeps the weights in scores.parquet: threshold --results gives the same entries
    assert run("audit", str(sampled), *flags[:-2], "--n-boot", "30", "--n-perm", "30", "--out",
               str(tmp_path / "a"))[0] == 0
    assert run("threshold", "--results", str(tmp_path / "a"), "--min-precision", "0.8", "--n-boot", "200")[0] == 0
    assert to_record(read_thresholds(tmp_path / "a"))["entries"] == th["entries"]
    # unweighted, the same file is another population
    plain_file = tmp_path / "plain.jsonl"
    plain_file.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert run("threshold", str(plain_file), *flags, "--min-precision", "0.8", "--out", str(tmp_path / "u"))[0] == 0
    (u,) = to_record(read_thresholds(tmp_path / "u"))["entries"]
    assert not u["weighted"] and u["in_sample"]["naive"] != e["in_sample"]["naive"]


# --- slices that cannot be certified each say why in one line ------------------------------------------------------

@pytest.fixture
def awkward(tmp_path) -> Path:
    """Four slices of construct x with a precomputed score: one class, too few unsupported pairs, a target no
    threshold meets (every unsupported pair scores highest), and one that certifies."""
    rng = np.random.default_rng(0)
    rows = []

    def add(ds, labels, scores):
        rows.extend({"id": f"{ds}-{i}", "dataset": ds, "claim": "c", "evidence": "e", "label": int(y),
                     "construct": "x", "mine": float(s)} for i, (y, s) in enumerate(zip(labels, scores)))

    add("oneclass", [1] * 12, rng.random(12))
    add("few", [0] * 10 + [1] * 20, rng.random(30))
    add("unmet", [0] * 30 + [1] * 30, [1.0] * 30 + [0.5] * 30)
    add("good", [0] * 40 + [1] * 40, np.r_[rng.uniform(0, 0.5, 40), rng.uniform(0.45, 1, 40)])
    path = tmp_path / "awkward.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_one_class_too_few_labels_and_an_unmet_target_each_give_one_clear_line(awkward, tmp_path):
    code, out = run("threshold", str(awkward), "--scorers", "none", "--score-col", "mine=mine", *FP10,
                    "--n-boot", "100", "--no-cache", "--quiet", "--out", str(tmp_path / "o"))
    assert code == 0
    lines = out.splitlines()
    for sl, reason in (("oneclass", "one class only (12 supported, 0 unsupported pairs)"),
                       ("few", "too few labels: 10 unsupported pairs"),
                       ("unmet", "no threshold meets false-pass ≤ 0.1 even in-sample")):
        assert sum(line.startswith(f"  {sl} (mine): {reason}") for line in lines) == 1, out
    got = {e["slice"]: e for e in to_record(read_thresholds(tmp_path / "o"))["entries"]}
    assert got["oneclass"]["status"] == "one_class" and got["oneclass"]["transfer"] is None
    assert got["unmet"]["fewest_labels"] is None and got["unmet"]["naive_threshold"] is None
    assert got["few"]["fewest_labels"]["more_labels"] > 0
    assert got["good"]["certified_threshold"] is not None and got["good"]["transfer"]["slices"] == ["few", "good",
                                                                                                    "unmet"]
    assert "calibration" in got["good"] and got["good"]["calibration"]["reliability"]["ece"]["estimate"] >= 0


@pytest.mark.parametrize("target", [["--max-false-pass", "1e-9"], ["--max-false-pass", "1e-7"],
                                    ["--min-precision", "0.999999999"], ["--min-catch", "0.999999999"]])
def test_a_target_too_strict_for_any_sample_is_a_certificate_naming_the_labels_it_needs(demo, target, tmp_path):
    """It was a TypeError: the count of labels passed the search's cap. Now each slice says how many it would take."""
    code, out = run("threshold", "--results", str(demo), *target, "--scorers", "lexical", "--n-boot", "50",
                    "--out", str(tmp_path), "--quiet")
    assert code == 0 and "Traceback" not in out
    got = to_record(read_thresholds(tmp_path))["entries"]
    assert len(got) == 8
    for e in got:
        assert e["certified_threshold"] is None and e["certified_reason"].startswith("too few labels: ")
        need = int(e["certified_reason"].split("needs at least ")[1].split()[0])
        assert need > 10_000_000  # past the search's cap, solved in closed form
        assert f"  {e['slice'].split(':', 1)[1]} (lexical): {e['certified_reason']}" in out.splitlines()
        f = e["fewest_labels"]
        if f is not None:  # a threshold with no failure: its count, not "no amount"
            assert f["risk"] == 0.0 and f["units_needed"] == need and f["more_labels"] > 10_000_000
    assert sum(e["fewest_labels"] is not None for e in got) >= 6
    code, out = run("plan", "--results", str(demo), *target, "--slice", "begin:wow/t5")
    assert code == 0 and "needs at least" in out and "label " in out and "simulated" not in out


@pytest.mark.parametrize("argv, message", [
    (["threshold", "--max-false-pass", "0.1"], "give --results DIR (an earlier audit) or labelled files"),
    (["threshold", "--results", "NOWHERE", "--max-false-pass", "0.1"], "NOWHERE is not a folder"),
    (["threshold", "--results", "DEMO", "--max-false-pass", "1.5"], "strictly between 0 and 1"),
    (["threshold", "--results", "DEMO", "--max-false-pass", "0.1", "--scorers", "nli"], "scorer 'nli' is not among"),
    (["threshold", "--results", "DEMO", "--max-false-pass", "0.1", "--delta", "0"], "--delta: must be strictly"),
    (["threshold", "x.jsonl", "--max-false-pass", "0.1"], "give --out DIR"),
    (["plan", "--results", "DEMO", "--max-false-pass", "0.1", "--half-width", "0.05"], "not both"),
    (["plan", "--max-false-pass", "0.1"], "give --results DIR"),
])
def test_input_errors_are_one_line(demo, argv, message, capsys):
    argv = [str(demo) if a == "DEMO" else a for a in argv]
    try:
        code = main(argv)
    except SystemExit as exc:  # refused by the parser, before anything is read
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err


def test_a_scores_file_of_another_run_is_refused(demo, tmp_path):
    folder = tmp_path / "mixed"
    shutil.copytree(demo, folder)
    res = json.loads((folder / "results.json").read_text())
    res["run_id"] = "another"
    (folder / "results.json").write_text(json.dumps(res))
    with pytest.raises(Exception, match="is from run .* but results.json beside it from run another"):
        scored_from_results(folder)


# --- thresholds.json: one model, sealed, read back -------------------------------------------------------------

def test_thresholds_json_round_trips_sealed_with_the_keys_of_its_model(demo):
    pairs, res = scored_from_results(demo)
    opts = ThresholdOptions(target=Target("false_pass", 0.1), n_boot=300, recalibrate="platt")
    source = ThresholdSource(results=AuditRef(folder=str(demo), run_id=res.run_id))
    made = compute_thresholds(pairs, opts, source=source, run_id=res.run_id, slice_by="source")
    text = to_json(made)
    data = json.loads(text)
    assert "NaN" not in text and "Infinity" not in text and is_sealed(data)
    assert list(data) == [f.name for f in fields(ThresholdsResults)] + ["digest"]
    calibration = ["reliability", "reason", "recalibration", "recalibration_reason", "transfer", "transfer_reason"]
    for e in data["entries"]:
        assert list(e) == [f.name for f in fields(ThresholdEntry)]
        assert list(e["calibration"]) == calibration[:len(e["calibration"])] and len(e["calibration"]) >= 4
    folder = demo.parent / "roundtrip"
    folder.mkdir()
    (folder / "thresholds.json").write_text(text)
    back = read_thresholds(folder, "test")
    assert isinstance(back, ThresholdsResults) and back.entries[0].calibration.recalibrated is not None
    assert to_json(back) == text  # records → JSON → records → the same bytes
    data["entries"][1]["held_out"] = "every fold"  # a value of the wrong type: one line naming the file and key
    (folder / "thresholds.json").write_text(json.dumps(data))
    with pytest.raises(InputError, match=r"^.*thresholds\.json: key 'entries\[1\]\.held_out': expected an object or "
                                         r"null, got a string$"):
        read_thresholds(folder, "test")
    del data["entries"][0]["certificate"]["unit"]
    (folder / "thresholds.json").write_text(json.dumps(data))
    with pytest.raises(InputError, match=r"key 'entries\[0\]\.certificate\.unit' is missing"):
        read_thresholds(folder, "test")


def test_same_seed_same_numbers_and_another_seed_other_draws(demo, tmp_path):
    copies = {}
    for name, seed in (("a", "3"), ("b", "3"), ("c", "4")):
        copies[name] = tmp_path / name
        shutil.copytree(demo, copies[name])
        assert run("threshold", "--results", str(copies[name]), *FP10, "--n-boot", "200", "--seed", seed, "--quiet",
                   "--recalibrate", "isotonic")[0] == 0

    def numbers(folder):
        th = json.loads((folder / "thresholds.json").read_text())
        return {k: v for k, v in th.items() if k not in ("elapsed_s", "digest", "source", "config")}

    assert diff(numbers(copies["a"]), numbers(copies["b"])) == []
    other = diff(numbers(copies["a"]), numbers(copies["c"]))
    assert any(".in_sample." in d and ".ci_" in d for d in other)  # another seed: other bootstrap draws and folds
    a, c = entries(copies["a"]), entries(copies["c"])  # ... but the same thresholds and in-sample rates
    for key, e in a.items():
        assert (e["certified_threshold"], e["naive_threshold"]) == (c[key]["certified_threshold"],
                                                                    c[key]["naive_threshold"])
        naive = e["in_sample"]["naive"]["false_pass"]["estimate"]
        assert naive == c[key]["in_sample"]["naive"]["false_pass"]["estimate"]


# --- the report and plan --------------------------------------------------------------------------------------

def test_the_report_shows_the_thresholds_section_and_leaves_out_another_runs_file(demo, tmp_path):
    folder = tmp_path / "rep"
    shutil.copytree(demo, folder)
    paths = build_report(folder)
    md = paths.markdown.read_text()
    assert "## Deployable thresholds" in md and (folder / "plots" / "reliability.svg").is_file()
    e = entries(folder)[("lexical", "begin:wow/doha")]
    row = next(line for line in md.splitlines() if line.startswith("| wow/doha | lexical |"))
    assert f"| {fmt.threshold(e['certified_threshold'])} |" in row
    assert f"| {fmt.threshold(e['naive_threshold'])} |" in row
    assert "each slice's naive threshold applied to every slice" in md and "reliability" in md
    th = json.loads((folder / "thresholds.json").read_text())
    th["run_id"] = "someone-else"
    (folder / "thresholds.json").write_text(json.dumps(th))
    paths = build_report(folder)
    assert "## Deployable thresholds" not in paths.markdown.read_text() and paths.ignored


def test_an_edited_thresholds_file_becomes_a_note(demo, tmp_path):
    folder = tmp_path / "edited"
    shutil.copytree(demo, folder)
    th = json.loads((folder / "thresholds.json").read_text())
    del th["entries"][0]["held_out"]
    (folder / "thresholds.json").write_text(json.dumps(th))
    md = build_report(folder).markdown.read_text()
    assert "## Deployable thresholds" in md and "do not have the layout this report reads" in md


def test_plan_gives_the_label_counts_of_threshold_and_simulates_them(demo):
    got = entries(demo)
    plans = plan(PlanOptions(results=str(demo), gate=Target("false_pass", 0.1), sims=20))
    assert len(plans) == 8
    for p in plans:
        assert isinstance(p, GatePlan)
        sl = p.title.split("slice ", 1)[1].rsplit(", ", 1)[0]
        e = got[("lexical", sl)]
        assert p.certified_threshold == e["certified_threshold"]
        if p.certified_threshold is None:  # one answer to "how many labels": threshold's own counts
            assert to_record(p.fewest_labels) == e["fewest_labels"] and to_record(p.label_need) == e["label_need"]
        if p.simulated:
            assert p.simulated.n == e["fewest_labels"]["labels_needed"]
            assert 0 <= p.simulated.certified_share <= 1
    code, out = run("plan", "--results", str(demo), *FP10, "--sims", "10", "--slice", "attributionbench:LFQA")
    assert code == 0 and "label 275 pairs in all (225 more)" in out and "simulated: 10 samples of 275 pairs" in out
