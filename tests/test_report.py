"""The report room: built from a real (small, fast) demo audit; Markdown parsed back against
results.json; HTML opened in headless Chromium; odd layouts become notes, never crashes."""
from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
from pathlib import Path

import pytest

from attrib_audit.cli import main
from attrib_audit.report.browser import check_page, find_chromium
from attrib_audit.report.build import build_report
from attrib_audit.report.inputs import ReportError

DATA = Path(__file__).parent / "data"
CI_CELL = re.compile(r"^(-?\d\.\d{3}) \[(-?\d\.\d{3}), (-?\d\.\d{3})\](?: \((.*)\))?$")


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """`attrib-audit demo -v` with lexical+minilm, 200 resamples and a temporary cache: (folder, stdout)."""
    tmp = tmp_path_factory.mktemp("demo")
    out = io.StringIO()
    with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(out):
        mp.setenv("ATTRIB_AUDIT_HOME", str(tmp / "home"))
        mp.setenv("ATTRIB_AUDIT_CACHE", str(tmp / "home" / "scores.sqlite"))
        rc = main(["demo", "--scorers", "lexical,minilm", "--n-boot", "200", "--cache", str(tmp / "cache.sqlite"),
                   "--out", str(tmp / "demo"), "--quiet", "-v"])
    assert rc == 0
    return tmp / "demo", out.getvalue()


def md_table(md: str, first_header: str, column: str = "") -> tuple[list[str], list[list[str]]]:
    """The first Markdown table whose header starts with `first_header` (and has `column`): (header, rows)."""
    lines = md.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(f"| {first_header} |") and f"| {column}" in line:
            header = [c.strip() for c in line.strip("|").split(" | ")]
            rows = []
            for row in lines[i + 2:]:
                if not row.startswith("|"):
                    break
                rows.append([c.strip() for c in re.split(r"(?<!\\)\|", row.strip()[1:-1])])
            return header, rows
    raise AssertionError(f"no table starting with {first_header!r}")


def demo_layout(demo_dir: Path) -> tuple[list[str], int]:
    """Sections and figure count the demo report must have; transfer and sensitivity blocks add one of each."""
    res = json.loads((demo_dir / "results.json").read_text())
    extra = [k for k in ("transfer", "sensitivity") if k in res]
    return ["headline", "auroc", *extra, "paired", "evidence", "reproduce"], 4 + len(extra)


def copy_results(demo_dir: Path, tmp_path: Path, edit=None) -> Path:
    folder = tmp_path / "res"
    folder.mkdir()
    res = json.loads((demo_dir / "results.json").read_text())
    if edit:
        edit(res)
    (folder / "results.json").write_text(json.dumps(res))
    return folder


def test_demo_ends_by_writing_the_report(demo):
    folder, printed = demo
    assert f"report: {folder / 'report.html'}" in printed.splitlines()[-3]
    assert printed.index("== transfer within") < printed.index("== sensitivity") < printed.index("report: ")
    for name in ("auroc_heatmap", "auroc_forest", "rank_chart", "paired_differences"):
        assert (folder / "plots" / f"{name}.svg").read_text().lstrip().startswith("<?xml")
    assert not list((folder / "plots").glob("*.png"))  # the HTML embeds SVG: PNGs only with --png
    html = (folder / "report.html").read_text()
    assert "<script" not in html and not re.search(r"""(src|href)=["']https?:""", html)
    assert html.count('src="data:image/svg+xml;base64,') == demo_layout(folder)[1]


def test_markdown_renders_the_numbers_of_results_json(demo):
    folder, _ = demo
    res = json.loads((folder / "results.json").read_text())
    md = (folder / "report.md").read_text()
    header, rows = md_table(md, "construct")
    scorers = header[4:]
    assert scorers == ["lexical", "minilm"]
    cells = {(name, row[1]): row[4 + j] for row in rows for j, name in enumerate(scorers)}
    assert len(cells) == len(res["auroc"]) == 16
    trunc = {(t["scorer"], t["slice"]): t for t in res["truncation"]}
    for r in res["auroc"]:
        m = CI_CELL.match(cells[(r["scorer"], r["slice"])])
        assert m, cells[(r["scorer"], r["slice"])]
        assert [float(x) for x in m.groups()[:3]] == [round(r[k], 3) for k in ("auroc", "ci_low", "ci_high")]
        t = trunc[(r["scorer"], r["slice"])]
        if t["pairs_truncated"]:  # the truncation share stands next to the number it qualifies
            share = re.search(r"(\d+)% of pairs truncated, (\d+|<1)% of tokens", m.group(4))
            assert int(share.group(1)) == round(100 * t["pairs_truncated"] / t["n"])
        else:
            assert m.group(4) is None
    lfqa = cells[("minilm", "attributionbench:LFQA")]
    assert "100% of pairs truncated" in lfqa  # every LFQA pair is longer than MiniLM's window
    slices = {s["slice"]: s for s in res["slices"]}
    assert all(int(row[2]) == slices[row[1]]["n"] and int(row[3]) == slices[row[1]]["n_pos"] for row in rows)
    _, prow = md_table(md, "pair (A − B)")
    paired = {p["slice"]: p for p in res["paired"]}
    for row in prow:
        p = paired[row[1]]
        nums = [float(x) for x in re.findall(r"[-+]\d\.\d{3}", row[2])]
        assert nums == [round(p[k], 3) for k in ("diff", "ci_low", "ci_high")]
        assert (row[4] != "no clear difference (CI includes 0)") == p["excludes_zero"]
    for d in res["data"]:
        assert d["sha256"] in md and f"| {d['rows']} |" in md
    for s in res["scorers"]:
        assert s["signature"].replace("|", "\\|") in md
    assert f"--n-boot {res['config']['n_boot']} --seed {res['config']['seed']}" in md


def needs_chromium() -> None:
    """The browser checks are part of the suite: without Chromium they fail (CI installs it), never skip."""
    if find_chromium() is None:
        pytest.fail("chromium is not installed (Debian: apt-get install chromium); the report's browser check needs it")


def full_report(demo_dir: Path, tmp_path: Path) -> Path:
    """The demo results plus every other producer's saved output (see tests/data/README.md)."""
    transfer = json.loads((DATA / "report_transfer_demo.json").read_text())
    folder = copy_results(demo_dir, tmp_path, lambda r: r.update(transfer=transfer))
    for name, fixture in (("provenance", "report_provenance_wice.json"), ("probe", "report_probe_example.json")):
        shutil.copy(DATA / fixture, folder / f"{name}.json")
    # agreement.json is drawn from this run's scores, so it carries this run's id (else the report leaves it out)
    agreement = {**json.loads((DATA / "report_agreement_minilm_human.json").read_text()),
                 "run_id": json.loads((folder / "results.json").read_text())["run_id"]}
    (folder / "agreement.json").write_text(json.dumps(agreement))
    return folder


@pytest.mark.parametrize("which", ["demo", "full"])
def test_report_html_in_headless_chromium(demo, tmp_path, which):
    needs_chromium()
    folder = demo[0] if which == "demo" else full_report(demo[0], tmp_path)
    if which == "full":
        assert build_report(folder).skipped == []
    check = check_page(folder / "report.html", tmp_path / "report.png")
    assert check.console_errors == [] and check.network == [] and check.broken_images == [], check.summary()
    n_figures = demo_layout(demo[0])[1] if which == "demo" else 9
    assert len(check.images) == n_figures and all(i["scheme"] == "data:image/svg+xml;base64" and i["chars"] > 10_000
                                                  for i in check.images)
    assert all(i["width"] > 300 and i["height"] > 150 for i in check.images)
    assert check.sections == (demo_layout(demo[0])[0] if which == "demo" else
                              ["headline", "auroc", "transfer", "sensitivity", "paired", "evidence", "provenance",
                               "agreement", "probe", "reproduce"])
    png = (tmp_path / "report.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and check.height > 2000


def test_provenance_agreement_probe_numbers_match_their_files(demo, tmp_path):
    folder = full_report(demo[0], tmp_path)
    md = build_report(folder).markdown.read_text()
    three = lambda e, k="estimate": [round(e[x], 3) for x in (k, "ci_low", "ci_high")]  # noqa: E731
    nums = lambda cell: [float(x) for x in re.findall(r"[-+]?\d+\.\d{3}", cell)]  # noqa: E731
    prov = json.loads((DATA / "report_provenance_wice.json").read_text())["datasets"][0]
    _, rows = md_table(md, "ranker")
    by = {r[0]: r for r in rows}
    for name, r in prov["clean"]["rankers"].items():
        assert nums(by[name][1]) == three(r["top1"])
        s = prov["confusable"]["summary"][name]
        assert nums(by[name][4]) == [round(s["fooled"][k], 3) for k in ("mean", "sd", "min", "max")]
    assert nums(by["random baseline"][1]) == three(prov["clean"]["random_baseline"])
    agree = json.loads((DATA / "report_agreement_minilm_human.json").read_text())
    _, rows = md_table(md, "slice", "Cohen's κ [95% CI]")
    kappa = {r[0]: r for r in rows}
    for r in agree["slices"]:
        assert nums(kappa[r["slice"]][1]) == three(r, "kappa") and int(kappa[r["slice"]][3]) == r["n"]
    probe = json.loads((DATA / "report_probe_example.json").read_text())
    _, rows = md_table(md, "metric", "moved")
    moved = {r[0]: r for r in rows}
    for r in probe["metrics"]:
        assert nums(moved[r["metric"]][3]) == three(r["diff"], "mean")
        assert moved[r["metric"]][4] == ("yes" if r["diff"]["excludes_zero"] else "no")
    assert probe["verdict"] in md


def test_browser_check_reports_console_errors_and_broken_images(tmp_path):
    needs_chromium()
    page = tmp_path / "bad.html"
    page.write_text('<!DOCTYPE html><html><head><title>bad</title></head><body><img src="data:image/png;base64,AAAA">'
                    '<script>console.error("boom"); notDefined();</script></body></html>')
    check = check_page(page, tmp_path / "bad.png")
    assert not check.ok and len(check.broken_images) == 1
    assert "boom" in check.console_errors and any("notDefined" in e for e in check.console_errors)


def test_transfer_section_from_saved_transfer_statistics(demo, tmp_path):
    """The transfer block was saved by the transfer room's audit on this demo (lexical+minilm, 200 resamples)."""
    transfer = json.loads((DATA / "report_transfer_demo.json").read_text())
    folder = copy_results(demo[0], tmp_path, lambda r: r.update(transfer=transfer))
    paths = build_report(folder)
    assert paths.skipped == [] and (folder / "plots" / "lodo_regret.svg").exists()
    md = paths.markdown.read_text()
    headline = md.split("## Headline", 1)[1].split("\n## ", 1)[0]
    att = transfer["constructs"]["attribution"]["regret"]
    fixed = {f["metric"]: f for f in att["fixed"]}
    assert att["lowest_regret_metric"] == "minilm"
    assert "attribution (4 datasets): use minilm, the portable metric with the lowest regret" in headline
    assert "on the audited datasets it loses on average" in headline and "(in-sample regret)" in headline
    assert "On a held-out dataset, picking the metric that was best on the other datasets" in headline
    assert ("Caveat: minilm's AUROC rests on truncated evidence on attributionbench:LFQA (100% of pairs truncated"
            in headline)
    m = fixed["minilm"]
    assert f"{m['mean']:.3f} [{m['ci_low']:.3f}, {m['ci_high']:.3f}]" in headline
    sel = att["selector"]
    assert f"naive selector) costs {sel['mean']:.3f} [{sel['ci_low']:.3f}, {sel['ci_high']:.3f}]" in headline
    _, port = md_table(md, "metric")  # the first "metric" table: attribution portability
    assert [r[:2] for r in port] == [["lexical", "yes"], ["minilm", "yes"]]
    assert "| minilm | no | begin:wow/gpt2 | no | begin:wow/gpt2 |" in md  # boundary-dialogue breaks on gpt2


def test_a_file_without_truncation_rows_still_draws_the_failures(demo, tmp_path):
    """A file without the truncation rows (an earlier version) reads them as empty: the failures are still drawn."""
    folder = copy_results(demo[0], tmp_path, lambda res: res.pop("truncation"))
    md = build_report(folder).markdown.read_text()
    assert "## Truncation and failures" in md  # failures still shown without truncation
    assert "## AUROC per metric and slice" in md and "(10% of pairs" not in md


def test_a_transfer_block_of_another_layout_is_refused_in_one_line(demo, tmp_path):
    """The transfer block is checked with the rest of the file: one line naming the file and the missing key."""
    def damage(res):
        res["transfer"] = {"constructs": {"attribution": {"status": "ok", "regret": {}}}}
    folder = copy_results(demo[0], tmp_path, damage)
    with pytest.raises(ReportError, match=r"results\.json: key 'transfer\.level' is missing$"):
        build_report(folder)


def test_a_row_of_another_layout_is_refused_in_one_line(demo, tmp_path):
    """The typed rows are checked when the file is read: a paired row without its fields names the file and key."""
    folder = copy_results(demo[0], tmp_path, lambda res: res.update(paired=[{"surprise": 1}]))
    with pytest.raises(ReportError, match=r"results\.json: key 'paired\[0\]\.scorer_a' is missing$"):
        build_report(folder)


def test_failures_and_one_class_slices_are_visible(tmp_path):
    from results_records import BASE

    res = {
        **BASE,
        "config": {**BASE["config"], "ci": "95% CI", "n_boot": 100, "seed": 3, "scorers": ["judge"]},
        "scorers": [{"scorer": "judge", "signature": "judge:v1", "n_pairs": 58, "n_unique": 58, "n_cached": 0,
                     "n_scored": 58, "n_batches": 1}],
        "slices": [{"slice": "a", "n": 50, "n_pos": 20, "n_groups": 50, "construct": "attribution", "status": "ok"},
                   {"slice": "b", "n": 8, "n_pos": 8, "n_groups": 8, "construct": "attribution",
                    "status": "one_class"}],
        "auroc": [{"scorer": "judge", "slice": "a", "auroc": 0.7, "ci_low": 0.6, "ci_high": 0.8, "n": 47, "n_pos": 20,
                   "n_groups": 47, "n_failed": 3},
                  {"scorer": "judge", "slice": "b", "auroc": None, "ci_low": None, "ci_high": None, "n": 8,
                   "n_pos": 8, "n_groups": 8, "note": "one class in slice: AUROC undefined"}],
        "failures": [{"scorer": "judge", "slice": "a", "n": 50, "n_failed": 3, "examples": ["unparseable: 'maybe'"]},
                     {"scorer": "judge", "slice": "b", "n": 8, "n_failed": 0, "examples": []}],
        "truncation": [{"scorer": "judge", "slice": "a", "n": 50, "pairs_truncated": 30, "tokens_truncated": 300,
                        "input_tokens": 1200, "share_tokens_cut": 0.25, "mean_chunks": 1.0}],
    }
    (tmp_path / "results.json").write_text(json.dumps(res))
    md = build_report(tmp_path).markdown.read_text()
    assert "0.700 [0.600, 0.800] (60% of pairs truncated, 25% of tokens; 3 failed rows excluded (6%))" in md
    assert "one class in slice: AUROC undefined" in md
    assert "unparseable: 'maybe'" in md and "| attribution | a | 3/50 |" in md
    assert "Half or more of the pairs were truncated for: judge on a" in md


def test_audit_report_flag_and_report_command(tmp_path, capsys):
    from attrib_audit.data.demo import demo_paths

    out = tmp_path / "o"
    assert main(["audit", str(demo_paths()[1]), "--scorers", "lexical", "--n-boot", "100", "--slice-by", "source",
                 "--cache", str(tmp_path / "c.sqlite"), "--out", str(out), "--report", "--quiet"]) == 0
    assert f"report: {out / 'report.html'}" in capsys.readouterr().out
    shot = ["--screenshot", str(tmp_path / "shot.png")] if find_chromium() else []
    assert main(["report", str(out), "--out", str(tmp_path / "r"), "--probe", str(DATA / "report_probe_example.json"),
                 *shot]) == 0
    assert "## Answer-level probe" in (tmp_path / "r" / "report.md").read_text()
    if shot:
        # heatmap, forest, length halves, probe
        assert "browser check: ok — 4 images (0 broken)" in capsys.readouterr().out
    assert (tmp_path / "r" / "report.md").exists() and (tmp_path / "r" / "plots" / "auroc_heatmap.svg").exists()
    assert not (tmp_path / "r" / "plots" / "paired_differences.svg").exists()  # one scorer: no pairs
    assert not (tmp_path / "r" / "plots" / "auroc_heatmap.png").exists()
    assert main(["report", str(out), "--out", str(tmp_path / "p"), "--png"]) == 0
    png = (tmp_path / "p" / "plots" / "auroc_heatmap.png").read_bytes()
    assert png.startswith(b"\x89PNG") and len(png) > 5000
    assert "](<plots/auroc_heatmap.png>)" in (tmp_path / "p" / "report.md").read_text()


def test_report_from_provenance_alone(tmp_path):
    shutil.copy(DATA / "report_provenance_wice.json", tmp_path / "provenance.json")
    paths = build_report(tmp_path)
    md = paths.markdown.read_text()
    assert [line for line in md.splitlines() if line.startswith("## ")] == ["## Provenance diagnostic"]
    assert "attrib-audit 0.1.0" in md and [p.name for p in paths.plots] == ["provenance_wice_provenance.svg"]


def test_report_errors_name_the_file(tmp_path, capsys):
    assert main(["report", str(tmp_path)]) == 2
    assert f"{tmp_path}: holds none of results.json" in capsys.readouterr().err
    (tmp_path / "results.json").write_text('{"auroc": [1, 2,]}')
    with pytest.raises(ReportError, match=r"results.json: not valid JSON \(line 1, column 17"):
        build_report(tmp_path)
    shutil.rmtree(tmp_path / "plots", ignore_errors=True)
