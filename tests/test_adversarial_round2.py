"""Reproductions from the second adversarial round, each a command line that used to end in a traceback, a hang or a
silent wrong number, now one line (or the right number)."""
from __future__ import annotations

from pathlib import Path

import pytest

from cli_run import run_main as run


def one_line(err: str) -> str:
    assert "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


NOT_UTF8 = b"garbage\x00\xff\n"


def test_a_non_utf8_tsv_read_as_begin_is_one_line(tmp_path):
    path = tmp_path / "bad.tsv"
    path.write_bytes(NOT_UTF8)
    code, _, err = run(["audit", str(path), "--format", "begin", "--scorers", "lexical", "--no-cache", "--quiet",
                        "--out", str(tmp_path / "o")])
    assert code == 2
    assert one_line(err) == f"attrib-audit: data error: {path}: line 1 is not UTF-8 (byte 9 of the line)"


def test_a_non_utf8_tsv_under_reproduce_data_dir_is_one_line(tmp_path):
    for name in ("begin_dev_wow.tsv", "begin_test_wow.tsv"):
        (tmp_path / "begin").mkdir(exist_ok=True)
        (tmp_path / "begin" / name).write_bytes(NOT_UTF8)
    code, _, err = run(["reproduce", "--data-dir", str(tmp_path), "--tables", "10", "--n-boot", "20", "--no-cache",
                        "--quiet"])
    assert code == 2
    assert one_line(err).startswith(f"attrib-audit: data error: {tmp_path / 'begin' / 'begin_dev_wow.tsv'}: line 1 is "
                                    "not UTF-8")


# ---- degenerate scores at the system level ---------------------------------------------------------------------------

def _systems_data(n_sys: int = 5, n_inputs: int = 40, seed: int = 3):
    import numpy as np

    rng = np.random.default_rng(seed)
    systems = np.repeat([f"s{i}" for i in range(n_sys)], n_inputs)
    groups = np.tile([f"q{j}" for j in range(n_inputs)], n_sys)
    quality = np.repeat(np.linspace(0.2, 0.8, n_sys), n_inputs)
    labels = (rng.random(systems.size) < quality).astype(int)
    signal = quality + rng.normal(0, 0.3, systems.size)
    return labels, signal, systems, groups


def test_a_constant_score_column_ties_every_system():
    """0.1 everywhere gave a ranking made of summation rounding (τ-b 0.061, recommended by select)."""
    import numpy as np

    from attrib_audit.stats.systems import agreement_replicates, rank_agreement, system_bootstrap

    labels, signal, systems, groups = _systems_data()
    for c in (0.1, 0.5, 1e-300, 3e300):
        const = np.full(labels.size, c)
        const[::7] = c * (1 + 1e-13)  # constant to a relative tolerance: a scorer's float noise
        res = system_bootstrap(labels, {"const": const, "signal": signal}, systems, groups, n_boot=200, rng=0)
        mean = res.point[res.row("const")]
        assert np.all(mean == mean[0]) and np.all(res.replicates[res.row("const")] == mean[0])
        assert abs(mean[0] - c) <= 1e-12 * c
        tau = {r.metric: r.tau for r in rank_agreement(agreement_replicates(res))}
        assert np.isnan(tau["const"].estimate) and np.isfinite(tau["signal"].estimate)


def test_scores_near_the_float_limit_rank_as_the_same_scores_scaled_down():
    """A metric scaled to ±1e308 got no τ-b and a numpy 'invalid value' warning (its sums overflowed)."""
    import warnings

    import numpy as np

    from attrib_audit.stats.systems import agreement_replicates, rank_agreement, system_bootstrap

    labels, signal, systems, groups = _systems_data()
    centred = signal - signal.mean()
    huge = centred / np.abs(centred).max() * 1.7e308
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = system_bootstrap(labels, {"huge": huge, "plain": centred}, systems, groups, n_boot=200, rng=0)
        got = {r.metric: r for r in rank_agreement(agreement_replicates(res))}
    assert np.isfinite(res.point[res.row("huge")]).all()
    for stat in ("tau", "pairwise_accuracy", "pearson"):
        a, b = getattr(got["huge"], stat), getattr(got["plain"], stat)
        assert np.isfinite(a.estimate) and a.estimate == pytest.approx(b.estimate, abs=1e-9), stat
        assert (a.ci_low, a.ci_high) == pytest.approx((b.ci_low, b.ci_high), abs=1e-9), stat


# ---- thresholds printed with significant digits ----------------------------------------------------------------------

def _scaled_pairs(tmp_path: Path, scale: float) -> Path:
    import json
    import random

    from attrib_audit.data.demo import demo_paths

    rng = random.Random(1)
    rows = [json.loads(line) for line in demo_paths()[0].read_text(encoding="utf-8").splitlines()]
    for r in rows:
        r["m"] = (rng.random() + (1.5 if r["label"] else 0.0)) * scale
    path = tmp_path / "scaled.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize("scale", [1e-6, 1e300 * 1e7])
def test_a_threshold_prints_as_the_number_in_thresholds_json(tmp_path, scale):
    """Scores near 1e-6 printed certified t = 0.0000 (thresholds.json: 9.67e-07); near 1e307, 310-digit numbers."""
    import json
    import re

    from attrib_audit.report.fmt import threshold

    out = tmp_path / "o"
    code, printed, err = run(["threshold", str(_scaled_pairs(tmp_path, scale)), "--scorers", "none", "--score-col",
                              "m=m", "--max-false-pass", "0.1", "--n-boot", "100", "--out", str(out), "--report",
                              "--no-cache", "--quiet"])
    assert code == 0, err
    entry = json.loads((out / "thresholds.json").read_text())["entries"][0]
    t, naive = entry["certified_threshold"], entry["naive_threshold"]
    assert t is not None and naive is not None
    for text in (printed, (out / "report.md").read_text()):
        assert threshold(t) in text and threshold(naive) in text
        assert "0.0000" not in text and not re.search(r"\d{20}", text)
    shown = float(threshold(t))
    assert t <= shown <= t * (1 + 1e-3)  # significant digits, rounded up: never a looser gate than certified


def test_threshold_formatting():
    from attrib_audit.report.fmt import threshold

    assert [threshold(x) for x in (9.67e-07, 0.5, 0.73, 0.123456, 1e308, 1.7976931348623157e308, 0.0, 1.0)] == [
        "9.67e-07", "0.5", "0.73", "0.1235", "1e+308", "1.798e+308", "0", "1"]
    assert threshold(float("nan")) == "—" and threshold(None) == "—"


# ---- weighted samples at the system level ----------------------------------------------------------------------------

SUMMEVAL = Path(__file__).parent / "data" / "summeval_system_scores.jsonl"


def _weighted_summeval(tmp_path: Path) -> tuple[Path, list[str]]:
    """Four systems of the SummEval copy as a sample whose inclusion probabilities differ by label."""
    import json

    rows = [json.loads(line) for line in SUMMEVAL.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = [r for r in rows if r["system"] in ("M0", "M1", "M2", "M5")][:400]
    for r in rows:
        r["inclusion_prob"] = 0.9 if r["label"] else 0.2
    path = tmp_path / "sample.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    args = [str(path), "--claim-col", "system", "--evidence-col", "group", "--scorers", "none", "--score-col",
            "lexical=lexical", "--n-boot", "100", "--no-cache", "--quiet"]
    return path, args


def test_systems_refuses_a_weighted_sample_in_one_line(tmp_path):
    """`systems` gave unweighted τ-b and pass rates (0.222 where the weighted rate is 0.105) on a weighted sample."""
    path, args = _weighted_summeval(tmp_path)
    code, _, err = run(["systems", *args])
    assert code == 2
    assert one_line(err).startswith(f"attrib-audit systems: {path}: the sample is weighted (inclusion probabilities "
                                    "differ) and the system-level statistics have no weighted")


def test_an_audit_of_a_weighted_sample_says_why_it_has_no_system_numbers(tmp_path):
    import json

    _, args = _weighted_summeval(tmp_path)
    out = tmp_path / "audit"
    code, printed, err = run(["audit", *args, "--n-perm", "50", "--out", str(out), "--report"])
    assert code == 0, err
    block = json.loads((out / "results.json").read_text())["systems"]
    assert [e["status"] for e in block["slices"]] == ["skipped"]
    entry = block["slices"][0]
    assert "the sample is weighted" in entry["reason"] and "agreement" not in entry and "systems" not in entry
    assert "the sample is weighted" in (out / "report.md").read_text()
    code, _, err = run(["systems", "--results", str(out)])
    assert code == 2 and "the sample is weighted" in one_line(err)


def test_a_threshold_with_one_inclusion_probability_of_1e_300(tmp_path):
    """Overflow warnings and the reason "over nan unsupported pairs": Σw² of a weight 1e300 overflowed."""
    import json

    from attrib_audit.data.demo import demo_paths

    rows = [json.loads(line) for line in demo_paths()[0].read_text(encoding="utf-8").splitlines()]
    first_unsupported = next(i for i, r in enumerate(rows) if r["label"] == 0)
    for i, r in enumerate(rows):
        r["inclusion_prob"] = 1e-300 if i == first_unsupported else 0.5
    path = tmp_path / "sample.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    code, printed, err = run(["threshold", str(path), "--scorers", "lexical", "--max-false-pass", "0.1", "--n-boot",
                              "100", "--out", str(tmp_path / "o"), "--no-cache", "--quiet", "-v"])
    assert code == 0, err
    assert "warning" not in err and "nan" not in printed, err + printed
    assert "too few labels: 1 groups with an unsupported pair" in printed  # one weight dominates: effective n ≈ 1


# ---- --label-map on every label type, at the command line ------------------------------------------------------------

@pytest.mark.parametrize("arrow", [False, True])
def test_label_map_gives_one_auroc_whatever_the_labels_json_type(tmp_path, monkeypatch, arrow):
    """`--label-map '1=0,0=1'` was ignored for labels written 1.0 or true: AUROC 0.829 with 1.0, 0.171 with 1."""
    import json

    import attrib_audit.data.loaders as loaders

    if arrow:  # the Arrow reading, used for files of 16 MB and more
        monkeypatch.setattr(loaders, "ARROW_MIN_BYTES", 0)
    base = [json.loads(line) for line in _scaled_pairs(tmp_path, 1.0).read_text(encoding="utf-8").splitlines()]
    aurocs = {}
    for kind, spell in {"int": int, "float": float, "bool": bool}.items():
        path = tmp_path / f"{kind}.jsonl"
        path.write_text("".join(json.dumps({**r, "label": spell(r["label"])}) + "\n" for r in base), encoding="utf-8")
        out = tmp_path / f"out-{kind}"
        code, _, err = run(["audit", str(path), "--scorers", "none", "--score-col", "m=m", "--label-map", "1=0,0=1",
                            "--n-boot", "20", "--n-perm", "20", "--no-cache", "--quiet", "--out", str(out)])
        assert code == 0, err
        aurocs[kind] = [r["auroc"] for r in json.loads((out / "results.json").read_text())["auroc"]]
    assert aurocs["int"] == aurocs["float"] == aurocs["bool"]
    assert all(a < 0.5 for a in aurocs["int"])  # the map flipped the labels: m now ranks them backwards


def test_select_recommends_no_constant_metric_for_ranking_systems(tmp_path):
    """A column of 0.1 everywhere was recommended by `select --level system` (τ-b 0.061 from summation rounding)."""
    import json

    rows = [json.loads(line) for line in SUMMEVAL.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = [r for i, r in enumerate(rows) if (i * 7919) % 11 < 6]  # systems answer different inputs, in other numbers
    path = tmp_path / "const.jsonl"
    path.write_text("".join(json.dumps({**r, "const": 0.1}) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "audit"
    code, _, err = run(["audit", str(path), "--claim-col", "system", "--evidence-col", "group", "--scorers", "none",
                        "--score-col", "const=const", "--n-boot", "100", "--n-perm", "20", "--no-cache", "--quiet",
                        "--out", str(out)])
    assert code == 0, err
    code, printed, err = run(["select", "--results", str(out), "--level", "system"])
    assert code == 0, err
    assert "no recommendation: no candidate has a defined τ-b" in printed
