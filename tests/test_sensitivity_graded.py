"""The sensitivity section under a graded `--statistic`: the leave-one-dataset-out verdicts use the statistic the
transfer section recommends by, the AUROC-only parts say so, and the exchangeability permutation is not run."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from attrib_audit.audit.recommend import recommend
from attrib_audit.audit.sensitivity import SensitivitySection, lodo_section
from attrib_audit.files.records import from_record
from attrib_audit.report.console.sensitivity import format_sensitivity
from attrib_audit.report.sensitivity import lodo_blocks
from attrib_audit.stats.sensitivity import drop_dataset
from attrib_audit.stats.transfer import AurocMatrix

SRC = Path(__file__).resolve().parents[1] / "src"


def _rows() -> list[dict]:
    """Four datasets where the metrics disagree: `rank` follows the whole rating (best Spearman ρ), `cut` only says
    whether it reaches 4 (best AUROC for the label rating >= 4)."""
    g = np.random.default_rng(3)
    out = []
    for d in "ABCD":
        for i in range(16):
            for s in range(3):
                r = float(g.integers(1, 6))
                out.append({"id": f"{d}{i}s{s}", "dataset": d, "group": f"{d}{i}", "system": f"S{s}", "likert": r,
                            "rank": r + float(g.normal(scale=0.8)),
                            "cut": float(r >= 4) + float(g.normal(scale=0.05)) + 0.01 * r * float(g.normal())})
    return out


def _audit(tmp_path: Path, statistic: str) -> dict:
    path = tmp_path / "g.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _rows()))
    out = tmp_path / statistic
    proc = subprocess.run([sys.executable, "-m", "attrib_audit", "audit", str(path), "--rating-col", "likert",
                           "--label-from-rating", ">=4", "--construct", "attribution", "--scorers", "none",
                           "--score-col", "rank=rank", "--score-col", "cut=cut", "--statistic", statistic,
                           "--n-boot", "100", "--n-perm", "100", "--no-cache", "--out", str(out)],
                          capture_output=True, text=True, env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"},
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    res = json.loads((out / "results.json").read_text())
    res["_stdout"] = proc.stdout
    return res


def _point_matrix(entry: dict) -> AurocMatrix:
    metrics, datasets = entry["metrics"], entry["datasets"]
    point = np.array([[entry["auroc"][m][d] for d in datasets] for m in metrics])
    return AurocMatrix.from_columns(metrics, datasets, list(point.T), [np.repeat(c[:, None], 5, axis=1)
                                                                      for c in point.T])


def test_lodo_follows_the_transfer_statistic(tmp_path):
    by_stat = {s: _audit(tmp_path, s) for s in ("spearman", "auroc")}
    for statistic, res in by_stat.items():
        entry = res["transfer"]["constructs"]["attribution"]
        [lodo] = res["sensitivity"]["lodo"]
        assert lodo["status"] == "ok"
        assert lodo["full"]["recommended"] == entry["regret"]["lowest_regret_metric"]
        assert lodo.get("statistic") == (None if statistic == "auroc" else "spearman")
    # the two statistics disagree here, so the verdicts really come from different matrices
    assert by_stat["spearman"]["sensitivity"]["lodo"][0]["full"]["recommended"] == "rank"
    assert by_stat["auroc"]["sensitivity"]["lodo"][0]["full"]["recommended"] == "cut"
    sp = by_stat["spearman"]
    entry = sp["transfer"]["constructs"]["attribution"]
    mat = _point_matrix(entry)
    for drop in sp["sensitivity"]["lodo"][0]["drops"]:  # each drop's best by point estimate: the Spearman matrix's
        kept = drop_dataset(mat, drop["dropped"])
        best = kept.metrics[int(np.argmax(kept.point.mean(axis=1)))]
        assert drop["recommended"] == best == recommend("attribution", kept).metric


def test_graded_statistic_names_the_auroc_only_parts_and_skips_exchangeability(tmp_path):
    res = _audit(tmp_path, "spearman")
    sen = res["sensitivity"]
    assert sen["statistic"] == "spearman" and sen["exchangeability"] == []
    assert "Spearman ρ" in sen["notes"][-1] and "AUROC" in sen["notes"][-1]
    record = from_record(SensitivitySection, sen)
    text = format_sensitivity(record)
    assert "Leave-one-dataset-out verdict by Spearman ρ, 'attribution'" in text and "note: the leave-one" in text
    assert "(by Spearman ρ)" in lodo_blocks(record.lodo)[0].caption
    auroc = _audit(tmp_path, "auroc")["sensitivity"]
    assert "statistic" not in auroc and auroc["exchangeability"]


class _Boot:
    """What build_matrix reads of a slice's statistic bootstrap."""

    def __init__(self, point: np.ndarray, g: np.random.Generator) -> None:
        self.point = point
        self.replicates = point[:, None] + g.normal(0, 0.02, (point.size, 200))
        self.n_rows = 40

    def aligned(self, idx):
        idx = list(idx)
        return type("Aligned", (), {"point": self.point[idx], "replicates": self.replicates[idx], "n": 40,
                                    "dropped": np.zeros(len(idx), dtype=int)})()


def test_lodo_tests_chance_against_the_statistic_s_own_null():
    """Correlations near 0.3 beat a correlation's chance level (0) but not the AUROC's (0.5)."""
    g = np.random.default_rng(0)
    boots = {d: _Boot(np.array([0.35, 0.25]), g) for d in "xyz"}
    [as_corr] = lodo_section({"k": ["x", "y", "z"]}, ["a", "b"], boots, "Spearman ρ")
    [as_auroc] = lodo_section({"k": ["x", "y", "z"]}, ["a", "b"], boots)
    assert as_corr.full is not None and as_auroc.full is not None
    assert as_corr.full.recommended == "a" and as_corr.full.verdict != "no-better-than-chance"
    assert as_auroc.full.recommended is None and as_auroc.full.verdict == "no-better-than-chance"
