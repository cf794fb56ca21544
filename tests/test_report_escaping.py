"""report.md and report.html show data and model output as text (no Markdown or HTML from them takes effect),
and the reproduce line reruns the audit with every option it was run with."""
from __future__ import annotations

import json
import shlex

from markdown_it import MarkdownIt

from attrib_audit.cli import main
from attrib_audit.report.render import md_text
from judge_servers import RuleServer, ScriptedServer, chat_reply

HOSTILE = '<img src=x onerror=alert(1)>**bold** [click](http://evil.example/a) ![i](http://evil.example/i.png)'
REPLY = "<script>alert(2)</script> # Heading\n\n- [x](http://evil.example/b) | cell | `code` ~~gone~~ _em_ &lt;"


def _rows(n: int = 8) -> list[dict]:
    return [{"id": f"r{i}", "dataset": HOSTILE if i % 2 else "plain", "claim": f"claim {i} word", "label": i % 4 < 2,
             "evidence": "claim word" if i % 4 < 2 else "other text"} for i in range(n)]


def _rendered_tokens(md: str):
    return [t for block in MarkdownIt("commonmark").enable("table").parse(md)
            for t in [block, *(block.children or [])]]


def test_hostile_dataset_names_and_judge_replies_stay_text(tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in _rows()))
    with ScriptedServer(lambda *_: chat_reply(REPLY)) as srv:
        rc = main(["audit", str(data), "--scorers", "lexical,judge", "--judge-url", srv.url, "--judge-model", "m",
                   "--out", str(tmp_path / "out"), "--n-boot", "30", "--n-perm", "30", "--report", "--quiet"])
    assert rc == 0
    md = (tmp_path / "out" / "report.md").read_text()
    assert "alert(1)" in md and "alert(2)" in md  # the text is there, as text
    tokens = _rendered_tokens(md)
    assert not [t for t in tokens if t.type in ("html_inline", "html_block")]
    assert not [t for t in tokens if t.type in ("heading_open",) and t.map and "Heading" in md.splitlines()[t.map[0]]]
    hrefs = [t.attrs.get("href") or t.attrs.get("src") for t in tokens if t.type in ("link_open", "image")]
    assert hrefs and all(str(h).startswith("plots/") for h in hrefs), hrefs  # only the report's own plots
    assert not [t for t in tokens if t.type in ("s_open", "code_inline")]
    html = (tmp_path / "out" / "report.html").read_text()
    assert "<script>alert" not in html and "<img src=x" not in html and "&lt;script&gt;alert(2)" in html


def test_md_text_round_trips_to_the_same_visible_text():
    md = MarkdownIt("commonmark")
    for text in [HOSTILE, REPLY, "1. not a list", "- nor this", "# nor a heading", "> nor a quote", "a_b_c *x*",
                 "[ref]: http://evil.example", "back\\\\slash \\\\* and \\\\w+", "0.700 [0.600, 0.800] score >= 0.5"]:
        inline = md.parseInline(md_text(text, line_start=True))[0].children
        assert [t.type for t in inline if t.type != "softbreak"] == ["text"], (text, inline)
        assert inline[0].content == " ".join(text.split())


def test_reproduce_line_reruns_the_same_audit(tmp_path, capsys):
    data = tmp_path / "d.csv"
    data.write_text("key,ds,claim,evidence,verdict\n" + "\n".join(
        f"k{i},{'ab'[i % 2]},Paris is in France {i},Paris is in France.{' Also' * i},{'yes' if i % 3 else 'no'}"
        for i in range(12)))
    with RuleServer() as srv:
        args = ["audit", str(data), "--id-col", "key", "--dataset-col", "ds", "--label-col", "verdict",
                "--label-map", "yes=1,no=0", "--construct", "attribution", "--format", "pairs",
                "--scorers", "lexical,judge", "--scorer-opt", "judge.evidence_chars=40", "--judge-url", srv.url,
                "--judge-model", "rules", "--judge-concurrency", "2", "--judge-retries", "1",
                "--n-boot", "40", "--n-perm", "25", "--seed", "3", "--slice-by", "dataset", "--quiet"]
        assert main([*args, "--out", str(tmp_path / "one"), "--report"]) == 0
        first = json.loads((tmp_path / "one" / "results.json").read_text())
        report = (tmp_path / "one" / "report.md").read_text()
        line = next(ln for ln in report.splitlines() if ln.startswith("attrib-audit audit"))
        assert shlex.split(line) == first["command"]
        for opt in ("--scorer-opt", "judge.evidence_chars=40", "--n-perm", "25", "--construct", "--label-map",
                    "--judge-url", "--judge-concurrency", "--format", "--id-col", "--seed"):
            assert opt in first["command"]
        rerun = [a if a != "OUT" else str(tmp_path / "two") for a in first["command"][1:]]
        assert main([*rerun, "--no-cache", "--quiet"]) == 0
    second = json.loads((tmp_path / "two" / "results.json").read_text())
    for key in ("auroc", "paired", "slices", "truncation", "transfer"):
        assert first[key] == second[key], key
    def where(r):
        return {k: v for k, v in r["config"]["scorer_options"]["judge"].items() if k != "request_cache"}

    assert where(first) == where(second)  # the same judge options (the caches may live elsewhere)
