"""Targets so strict no threshold can meet them (`--max-false-pass 1e-7`, `--min-precision 0.999999999`): one answer
or one line, never a traceback. (The fix in stats/threshold.py comes from another branch; this is the command-line
check of it: it fails until that fix is merged.)"""
from __future__ import annotations

import pytest

from attrib_audit.data.demo import demo_paths
from cli_run import run_stderr as run


@pytest.fixture(scope="module")
def audited(tmp_path_factory):
    out = tmp_path_factory.mktemp("tiny") / "audit"
    code, err = run(["audit", str(demo_paths()[0]), "--scorers", "lexical", "--n-boot", "50", "--n-perm", "50",
                     "--no-cache", "--quiet", "--out", str(out)])
    assert code == 0, err
    return out


@pytest.mark.parametrize("argv", [
    ["threshold", "--results", "A", "--max-false-pass", "1e-7", "--n-boot", "50"],
    ["threshold", "--results", "A", "--max-false-pass", "1e-9", "--n-boot", "50"],
    ["threshold", "--results", "A", "--min-precision", "0.999999999", "--n-boot", "50"],
    ["threshold", "--results", "A", "--min-catch", "0.999999999", "--n-boot", "50"],
    ["plan", "--results", "A", "--max-false-pass", "1e-9", "--sims", "2"],
], ids=lambda a: " ".join(a[3:5]) + f" ({a[0]})")
def test_a_target_no_threshold_can_meet_is_an_answer_not_a_traceback(audited, argv):
    code, err = run([str(audited) if a == "A" else a for a in argv])
    assert code in (0, 2), err
    assert "Traceback" not in err and "TypeError" not in err
