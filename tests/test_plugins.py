"""Plugin scorers: `module:factory` on sys.path, the `attrib_audit.scorers` entry points, and bad plugins."""
import json
import re
import textwrap
from pathlib import Path

import pytest
from sklearn.metrics import roc_auc_score

from attrib_audit.cli import main
from attrib_audit.data.demo import demo_paths
from attrib_audit.scorers import registry

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
BEGIN = next(p for p in demo_paths() if p.name.startswith("begin"))
FAST = ["--n-boot", "100", "--n-perm", "100", "--quiet", "--no-cache"]


def _oracle(claim: str, evidence: str, alpha: float) -> float:
    """The example's formula written out again, independently of its code."""
    import math

    c = set(re.findall(r"\w+", claim.lower()))
    e = re.findall(r"\w+", evidence.lower())
    return sum(1 for w in c if w in e) / len(c) * math.exp(-alpha * len(e) / 100)


def test_example_plugin_audits_from_sys_path_without_installing(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLES))
    out = tmp_path / "o"
    name = "length_penalised:make_scorer"
    assert main(["audit", str(BEGIN), "--scorers", f"lexical,{name}", "--scorer-opt", f"{name}.alpha=0.5",
                 "--out", str(out), *FAST]) == 0
    res = json.loads((out / "results.json").read_text())
    sig = {s["scorer"]: s["signature"] for s in res["scorers"]}
    assert sig[name] == "length_penalised:v1:alpha=0.5"
    rows = [json.loads(line) for line in BEGIN.read_text().splitlines()]
    auc = next(r["auroc"] for r in res["auroc"] if r["scorer"] == name)
    assert auc == pytest.approx(roc_auc_score([r["label"] for r in rows],
                                              [_oracle(r["claim"], r["evidence"], 0.5) for r in rows]), abs=1e-12)
    assert {(p["scorer_a"], p["scorer_b"]) for p in res["paired"]} == {("lexical", name)}


def test_own_metric_page_shows_the_shipped_example():
    page = (ROOT / "docs" / "how-to" / "own-metric.md").read_text()
    code = (EXAMPLES / "length_penalised.py").read_text()
    body = code[code.index("import math"):]
    assert body.strip() in page


@pytest.fixture
def fake_dist(tmp_path, monkeypatch):
    """An installed distribution as importlib.metadata sees it: a .dist-info with entry points on sys.path."""
    info = tmp_path / "fakeplug-1.2.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fakeplug\nVersion: 1.2\n")
    (info / "entry_points.txt").write_text(textwrap.dedent("""\
        [attrib_audit.scorers]
        lenpen = length_penalised:make_scorer
        broken = fakeplug_absent_module:make
        lexical = length_penalised:make_scorer
        """))
    monkeypatch.syspath_prepend(str(EXAMPLES))
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_entry_point_plugin_is_registered_listed_and_audited(fake_dist, tmp_path, capsys):
    specs = registry()
    assert specs["lenpen"].family == "plugin" and specs["lexical"].family == "surface"  # a built-in is never shadowed
    assert main(["models", "list"]) == 0
    listed = capsys.readouterr().out
    assert re.search(r"lenpen\s+ready .*\n\s+plugin from fakeplug 1\.2 \(entry point lenpen = "
                     r"length_penalised:make_scorer\)",
                     listed)
    assert re.search(r"broken\s+absent .*\n\s+plugin 'broken': cannot import fakeplug_absent_module:make: "
                     r"ModuleNotFoundError", listed)
    assert "plugin clash: lexical: plugin from fakeplug 1.2" in listed
    out = tmp_path / "o"
    assert main(["audit", str(BEGIN), "--scorers", "lenpen", "--scorer-opt", "lenpen.alpha=0", "--out", str(out),
                 *FAST]) == 0
    res = json.loads((out / "results.json").read_text())
    assert res["scorers"][0]["signature"] == "length_penalised:v1:alpha=0.0" and res["auroc"][0]["auroc"] > 0.5


PLUGINS = """
from attrib_audit.scorers import ScorerUnavailable

def raises(**_):
    raise RuntimeError("no API key configured\\nsecond line")

def not_a_scorer(**_):
    return object()

def absent(**_):
    raise ScorerUnavailable("weights not here: pip install something")

NOT_CALLABLE = 3
"""


@pytest.mark.parametrize("plugin, message", [
    ("fakeplug_absent_module:make", "plugin 'fakeplug_absent_module:make': cannot import fakeplug_absent_module:make: "
                                    "ModuleNotFoundError: No module named 'fakeplug_absent_module'"),
    ("badplugs:nothing", "plugin 'badplugs:nothing': cannot import badplugs:nothing: AttributeError:"),
    ("badplugs:NOT_CALLABLE", "plugin 'badplugs:NOT_CALLABLE': badplugs:NOT_CALLABLE is a int, not a callable factory"),
    ("badplugs:raises", "plugin 'badplugs:raises': building it failed: RuntimeError: no API key configured"),
    ("badplugs:not_a_scorer",
     "plugin 'badplugs:not_a_scorer': the factory returned a object without name, signature, score"),
    ("broken", "plugin 'broken': cannot import fakeplug_absent_module:make"),
])
def test_bad_plugin_is_a_one_line_error(fake_dist, tmp_path, capsys, plugin, message):
    (fake_dist / "badplugs.py").write_text(PLUGINS)
    rc = main(["audit", str(BEGIN), "--scorers", f"lexical,{plugin}", "--out", str(tmp_path / "o"), *FAST])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1 and message in err, err
    assert not (tmp_path / "o").exists()  # nothing half-written


def test_plugin_without_weights_is_skipped_like_a_builtin(fake_dist, tmp_path, capsys):
    (fake_dist / "badplugs.py").write_text(PLUGINS)
    assert main(["audit", str(BEGIN), "--scorers", "lexical,badplugs:absent", "--out", str(tmp_path / "o"),
                 "--n-boot", "100", "--n-perm", "100", "--no-cache"]) == 0
    assert "[skip] badplugs:absent: weights not here" in capsys.readouterr().err
