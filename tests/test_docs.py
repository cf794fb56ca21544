"""The docs cannot rot: every command and program they show runs here, and the site builds.

Each page (README.md and docs/**/*.md) is one test. Its fenced ```bash, ```console and ```python blocks run in
order in one fresh empty folder, with `$REPO` naming the repository root (a block that needs a repository file
says `$REPO/...`), `attrib-audit` and `python` on PATH, and one score cache shared by every page of the session.
An HTML comment on the line(s) just before a block changes what happens to it:

- `<!-- not-run: KIND — why -->` (KIND one of SKIP_KINDS): the block is shown, never run; the why is required;
- `<!-- file: NAME -->`: the block (any language) is written to NAME in the page's folder instead of run;
- `<!-- exit: N -->`: the block's command is expected to fail with exit status N (an error the page documents);
- `<!-- output -->` before a ```text block: the expected stdout of the run block before it, compared line by
  line after stripping trailing spaces; a line `...` stands for any run of lines (none included).

A ```console block holds its own expected output: lines starting with `$ ` (and their `\\` continuations)
run, the other lines are compared with their stdout as above.
"""
from __future__ import annotations

import difflib
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
RUN = ("bash", "console", "python")
NOT_OURS = {"sh", "shell", "zsh", "py", "python3", "pycon", "shell-session"}  # would hide a command from the run
SKIP_KINDS = {"network", "gpu", "server", "interactive", "ci", "long"}
MAX_SKIPPED = 20  # blocks shown but never run, all pages together: each one is a place the docs can rot
BLOCK_TIMEOUT_S = 600
FENCE = re.compile(r"^(?P<indent>[ ]*)(?P<fence>`{3,})(?P<lang>[\w+-]*)\s*$")
MARKER = re.compile(r"^\s*<!--\s*(?P<body>.*?)\s*-->\s*$")


@dataclass(frozen=True)
class Block:
    """One fenced block of a page and the markers just above it."""

    page: str
    line: int  # 1-based line of the opening fence
    lang: str
    text: str
    skip: tuple[str, str] | None = None  # (kind, why)
    file: str | None = None
    exit: int = 0
    output: bool = False

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def runs(self) -> bool:
        return self.lang in RUN and not self.skip and not self.file


class DocError(ValueError):
    """A page whose blocks or markers the harness cannot read as the module docstring describes."""


def _marker(body: str, where: str) -> dict:
    if body == "output":
        return {"output": True}
    m = re.fullmatch(r"not-run:\s*(\w+)\s*(?:—|–|--?)\s*(.*)", body, re.S)
    if m:
        kind, why = m.group(1), m.group(2).strip()
        if kind not in SKIP_KINDS:
            raise DocError(f"{where}: not-run kind {kind!r} is not one of {sorted(SKIP_KINDS)}")
        if not why:
            raise DocError(f"{where}: not-run: {kind} must say why the block is not run")
        return {"skip": (kind, why)}
    m = re.fullmatch(r"file:\s*(\S+)", body)
    if m:
        name = m.group(1)
        if Path(name).is_absolute() or ".." in Path(name).parts:
            raise DocError(f"{where}: file: {name} must be a relative path inside the page's folder")
        return {"file": name}
    m = re.fullmatch(r"exit:\s*(\d+)", body)
    if m:
        return {"exit": int(m.group(1))}
    raise DocError(f"{where}: unknown marker <!-- {body} --> (not-run: KIND — why | file: NAME | exit: N | output)")


def parse(page: Path, rel: str | None = None) -> list[Block]:
    """The page's fenced blocks with their markers, checked for what the harness needs to run them."""
    rel = rel or page.relative_to(ROOT).as_posix()
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, lang = len(m.group("indent")), m.group("fence"), m.group("lang").lower()
        where = f"{rel}:{i + 1}"
        end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == fence), None)
        if end is None:
            raise DocError(f"{where}: code fence never closed")
        body = "\n".join(line[indent:] if line[:indent].strip() == "" else line for line in lines[i + 1:end])
        markers: dict = {}
        k = i - 1
        while k >= 0 and (c := MARKER.match(lines[k])):
            markers.update(_marker(c.group("body"), where))
            k -= 1
        if lang in NOT_OURS:
            raise DocError(f"{where}: ```{lang} is neither run nor skipped: use bash, console or python")
        block = Block(rel, i + 1, lang, body + "\n", **markers)
        if block.output:
            prev = blocks[-1] if blocks else None
            if lang != "text":
                raise DocError(f"{where}: <!-- output --> marks a ```text block, not ```{lang}")
            if prev is None or not prev.runs:
                raise DocError(f"{where}: <!-- output --> must follow a block that runs")
        if block.exit and not block.runs:
            raise DocError(f"{where}: <!-- exit: N --> marks a block that runs")
        blocks.append(block)
        i = end + 1
    return blocks


def matches(expected: list[str], actual: list[str]) -> bool:
    """Line-by-line equality where an expected line `...` matches any run of actual lines."""
    reach = {0}  # positions in `actual` the expected lines so far can end at
    for line in expected:
        if line == "...":
            reach = set(range(min(reach), len(actual) + 1)) if reach else set()
        else:
            reach = {p + 1 for p in reach if p < len(actual) and actual[p] == line}
        if not reach:
            return False
    return len(actual) in reach


def _lines(text: str) -> list[str]:
    out = [line.rstrip() for line in text.splitlines()]
    while out and not out[-1]:
        out.pop()
    return out


def _console(text: str) -> tuple[str, str]:
    """A console block as (the commands, the output they should print)."""
    commands, output, cont = [], [], False
    for line in text.splitlines():
        if cont or line.startswith("$ "):
            commands.append(line if cont else line[2:])
            cont = line.endswith("\\")
        else:
            output.append(line)
    return "\n".join(commands) + "\n", "\n".join(output)


@pytest.fixture(scope="session")
def docs_env(tmp_path_factory) -> dict[str, str]:
    """What every page's commands see: this checkout's code, an offline hub, one score cache for the session."""
    home = tmp_path_factory.mktemp("docs-home")
    env = dict(os.environ)
    env.update(REPO=str(ROOT), ATTRIB_AUDIT_HOME=str(home), ATTRIB_AUDIT_CACHE=str(home / "scores.sqlite"),
               PATH=os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")]),
               PYTHONPATH=os.pathsep.join(p for p in [str(ROOT / "src"), env.get("PYTHONPATH", "")] if p),
               HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_DATASETS_OFFLINE="1", TOKENIZERS_PARALLELISM="false",
               PYTHONIOENCODING="utf-8", COLUMNS="100", NO_COLOR="1", NO_MKDOCS_2_WARNING="1")
    return env


def _execute(block: Block, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    if block.lang == "python":
        argv = [sys.executable, "-c", block.text]
    else:
        script = _console(block.text)[0] if block.lang == "console" else block.text
        argv = ["bash", "-e", "-o", "pipefail", "-c", script]
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=BLOCK_TIMEOUT_S)


def _compare(block: Block, expected: str, run: subprocess.CompletedProcess, cwd: Path, env: dict[str, str]) -> None:
    stdout = run.stdout
    for path, name in ((cwd.resolve(), "$PWD"), (cwd, "$PWD"), (env["ATTRIB_AUDIT_HOME"], "$ATTRIB_AUDIT_HOME")):
        stdout = stdout.replace(str(path), name)
    want, got = _lines(expected), _lines(stdout)
    if not matches(want, got):
        diff = "\n".join(difflib.unified_diff(want, got, "page", "actual stdout", lineterm=""))
        pytest.fail(f"{block.where}: the output the page shows is not what the command prints:\n{diff}\n"
                    f"--- stderr (end)\n{run.stderr[-2000:]}")


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(ROOT).as_posix() for p in PAGES])
def test_page_blocks_run_as_shown(page, tmp_path, docs_env):
    last: subprocess.CompletedProcess | None = None
    for block in parse(page):
        if block.skip:
            continue
        if block.file:
            target = tmp_path / block.file
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.text, encoding="utf-8")
        elif block.output:
            _compare(block, block.text, last, tmp_path, docs_env)
        elif block.runs:
            last = _execute(block, tmp_path, docs_env)
            if last.returncode != block.exit:
                pytest.fail(f"{block.where}: exit {last.returncode}, the page expects {block.exit}\n"
                            f"--- block\n{block.text}--- stdout (end)\n{last.stdout[-3000:]}\n"
                            f"--- stderr (end)\n{last.stderr[-3000:]}")
            if block.lang == "console":
                _compare(block, _console(block.text)[1], last, tmp_path, docs_env)


def test_skipped_blocks_say_why_and_stay_few():
    blocks = [b for page in PAGES for b in parse(page)]
    skipped = [b for b in blocks if b.skip]
    run = [b for b in blocks if b.runs]
    assert all(b.skip[1] for b in skipped)
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    for b in (b for b in skipped if b.skip[0] == "ci"):  # "CI runs it itself" must be true, line for line
        assert all(line in ci for line in b.text.splitlines() if line.strip()), f"{b.where}: not in .ci/run"
    assert len(run) >= 40, "the docs show fewer runnable blocks than expected: did the parser lose some?"
    assert len(skipped) <= MAX_SKIPPED and len(skipped) * 4 <= len(run), (
        "too many blocks are never run:\n" + "\n".join(f"{b.where} {b.skip[0]}: {b.skip[1]}" for b in skipped))


def test_harness_reads_markers_and_output_as_documented(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("<!-- not-run: gpu — needs a GPU -->\n```bash\nfalse\n```\n<!-- file: a/b.txt "
                    "-->\n```toml\nx=1\n```\n"
                    "<!-- exit: 2 -->\n```bash\nexit 2\n```\n```python\nprint(1)\n```\n<!-- output "
                    "-->\n```text\n1\n```\n")
    skip, file, fail, prog, out = parse(page, "p.md")
    assert skip.skip == ("gpu", "needs a GPU") and not skip.runs and file.file == "a/b.txt" and not file.runs
    assert fail.exit == 2 and fail.runs and prog.runs and out.output and out.text == "1\n"
    page.write_text("```bash\nls\n```\n<!-- not-run: ci — x -->\n```bash\nls\n```\n<!-- output -->\n```text\n\n```\n")
    with pytest.raises(DocError, match="must follow a block that runs"):
        parse(page, "p.md")
    page.write_text("```sh\nls\n```\n")
    with pytest.raises(DocError, match="neither run nor skipped"):
        parse(page, "p.md")
    assert matches(["a", "...", "d"], ["a", "b", "c", "d"]) and matches(["a", "...", "b"], ["a", "b"])
    assert matches(["...", "x"], ["x"]) and matches(["..."], [])
    assert not matches(["a", "...", "d"], ["a", "b"]) and not matches(["a"], ["a", "b"])
    assert not matches(["0.81"], ["0.810"])
    with pytest.raises(DocError, match="must say why"):
        _marker("not-run: gpu — ", "p:1")
    with pytest.raises(DocError, match="not one of"):
        _marker("not-run: slow — it is slow", "p:1")
    with pytest.raises(DocError, match="unknown marker"):
        _marker("notrun: gpu — x", "p:1")
    assert _console("$ echo a \\\n  b\na b\n") == ("echo a \\\n  b\n", "a b")
    shown, env = Block("p.md", 1, "text", ""), {"ATTRIB_AUDIT_HOME": "/nowhere"}
    printed = subprocess.CompletedProcess([], 2, f"{tmp_path}/x.jsonl, row 2  \n\n", "")
    _compare(shown, "$PWD/x.jsonl, row 2\n", printed, tmp_path, env)  # the folder named, trailing space and lines
    with pytest.raises(pytest.fail.Exception, match="row 3"):
        _compare(shown, "$PWD/x.jsonl, row 3\n", printed, tmp_path, env)


def test_mkdocs_build_strict_offline(tmp_path, docs_env):
    """The site builds with every warning an error (broken links, missing nav pages, bad API references).

    Never `-q`: mkdocs counts warnings as they are logged, so a quiet build passes --strict with broken links.
    """
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"),
                           "-d", str(tmp_path / "site")], cwd=tmp_path, env=docs_env, capture_output=True, text=True,
                          timeout=BLOCK_TIMEOUT_S)
    assert done.returncode == 0, done.stderr[-5000:]
    fetched = [f"{page.relative_to(tmp_path)}: {m.group(0)}" for page in (tmp_path / "site").rglob("*.html")
               for m in re.finditer(r'<(?:script|link|img)\b[^>]*(?:src|href)="(?:https?:)?//[^"]+"', page.read_text())]
    assert not fetched, f"the site would fetch from the network: {fetched[:5]}"
    cli = (tmp_path / "site" / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    from attrib_audit.cli.parser import build_parser, commands
    from attrib_audit.cli.reference import anchor
    missing = [name for name, _, _ in commands(build_parser()) if f'id="{anchor(name)}"' not in cli]
    assert not missing, f"commands missing from the built CLI reference: {missing}"
    print(f"mkdocs build: {time.monotonic() - start:.1f} s")


def _rendered(page: str) -> str:
    """A page's Markdown after the build hook filled its generated parts, as the site shows it."""
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import mkdocs_hooks
    finally:
        sys.path.remove(str(ROOT / "tools"))
    return mkdocs_hooks.on_page_markdown((ROOT / "docs" / page).read_text(encoding="utf-8"), None, None, None)


def test_cli_reference_is_generated_from_the_parser_and_names_every_command():
    from attrib_audit.cli.parser import build_parser, commands
    assert "<!-- generated: cli -->" in (ROOT / "docs" / "reference" / "cli.md").read_text(encoding="utf-8")
    text = _rendered("reference/cli.md")
    missing = [name for name, _, _ in commands(build_parser()) if f"## `{f'attrib-audit {name}'.strip()}`" not in text]
    assert not missing, f"commands missing from docs/reference/cli.md: {missing}"


def test_results_json_reference_documents_every_top_level_key_of_a_real_run(tmp_path, docs_env):
    done = subprocess.run(["attrib-audit", "demo", "--scorers", "lexical", "--n-boot", "200", "--n-perm", "200",
                           "--out", "d"], cwd=tmp_path, env=docs_env, capture_output=True, text=True,
                          timeout=BLOCK_TIMEOUT_S)
    assert done.returncode == 0, done.stderr[-3000:]
    keys = list(json.loads((tmp_path / "d" / "results.json").read_text(encoding="utf-8")))
    page = (ROOT / "docs" / "reference" / "results-json.md").read_text(encoding="utf-8")
    assert "<!-- generated: results-json -->" in page
    text = _rendered("reference/results-json.md")
    top = text[text.index("### AuditResults"):]
    top = top[:top.index("\n### ", 1)] + page  # the top-level table, and what the page itself adds
    missing = [k for k in keys if f"| `{k}` |" not in top]
    assert len(keys) > 10 and not missing, f"results.json keys not in the reference: {missing}"


def test_readme_stays_a_front_page():
    """The README answers what the tool is for and how to start; everything else lives in docs/, where it runs."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 150, f"README.md has {len(lines)} lines: move detail into a docs page"
