"""The built site shows terminal outputs whole: a wide table's font shrinks until its longest line fits the text
column (tools/mkdocs_hooks.py sets each block's width, docs/stylesheets/extra.css sizes the font), and nothing
hides behind a horizontal scrollbar. Checked in headless Chromium on the pages a newcomer reads first."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from attrib_audit.report.browser import Browser, find_chromium

ROOT = Path(__file__).resolve().parents[1]
FIT = """JSON.stringify(Array.from(document.querySelectorAll('.md-typeset pre > code')).map(c => {
  const box = c.closest('.highlight');
  const cols = box ? parseInt(box.style.getPropertyValue('--cols')) : NaN;
  const probe = document.createElement('span'); probe.textContent = 'M'.repeat(50); c.appendChild(probe);
  const cw = probe.getBoundingClientRect().width / 50; probe.remove();
  const st = getComputedStyle(c);
  const room = c.clientWidth - parseFloat(st.paddingLeft) - parseFloat(st.paddingRight);
  return {cols: cols, fits: cols * cw <= room + 0.5, clipped: c.scrollWidth > c.clientWidth + 1,
          font: parseFloat(st.fontSize), head: c.textContent.slice(0, 50)}; }))"""


def _hooks():
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import mkdocs_hooks
    finally:
        sys.path.remove(str(ROOT / "tools"))
    return mkdocs_hooks


def test_each_code_block_carries_its_width_without_its_prose_lines():
    hooks = _hooks()
    html = ('<div class="language-text highlight"><pre><span></span><code>'
            + "a" * 92 + "\n" + "b &amp; " + "p" * 150 + "\n</code></pre></div>")
    out = hooks.code_widths(html)
    assert 'class="language-text highlight" style="--cols: 92"' in out  # the 158-character prose line wraps instead
    assert out.replace(' style="--cols: 92"', "") == html


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(ROOT / "mkdocs.yml"), "-d",
                           str(out)], cwd=out, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1", "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    return out


@pytest.mark.parametrize("width", [1280, 1024])
def test_home_and_quickstart_outputs_fit_the_text_column(site, width):
    if find_chromium() is None:
        pytest.fail("chromium is required for the site check (Debian: apt-get install chromium)")
    seen = 0
    with Browser() as browser:
        for page in ("index.html", "quickstart/index.html"):
            tab = browser.new_tab()
            tab.send("Emulation.setDeviceMetricsOverride", {"width": width, "height": 900, "deviceScaleFactor": 1,
                                                            "mobile": False})
            tab.navigate((site / page).as_uri())
            blocks = json.loads(tab.evaluate(FIT))
            seen += len(blocks)
            wrong = [b for b in blocks if not b["fits"] or b["clipped"]]
            assert not wrong, f"{page} at {width} px: blocks cut or wrapped: {wrong}"
            assert all(b["font"] >= 11 for b in blocks), f"{page}: a block's font shrank below 11 px"
            if page.startswith("quickstart"):
                assert max(b["cols"] for b in blocks) >= 90  # the demo's table is among them
    assert seen >= 10


PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])


def _blocks(page: Path):
    from test_docs import parse
    return parse(page)


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(ROOT).as_posix() for p in PAGES])
def test_a_reader_can_run_what_the_page_shows_outside_the_test_harness(page):
    """The harness sets $REPO and HF_HUB_OFFLINE for every block; a reader's shell has neither. So a page defines
    REPO before its first use, and an output that says the hub is offline comes from a command that made it so."""
    defined = offline = False
    last = None
    for block in _blocks(page):
        if not (block.runs or block.output):
            continue
        if block.runs:
            text = block.text
            if "$REPO" in text or "${REPO}" in text:
                assert defined or "REPO=" in text.split("$REPO")[0], f"{block.where}: $REPO used, never defined"
            defined = defined or "REPO=" in text
            offline = offline or "export HF_HUB_OFFLINE=1" in text
            last = block
        elif "the hub is offline" in block.text:
            assert offline or "HF_HUB_OFFLINE=1" in last.text, (
                f"{block.where}: shows 'the hub is offline', but {last.where} runs without HF_HUB_OFFLINE=1: a "
                "reader's run prints something else")
