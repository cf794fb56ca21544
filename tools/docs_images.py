"""Regenerate the images the docs show from a real run, as tests/test_docs.py checks the outputs they show.

    PYTHONPATH=src python tools/docs_images.py           # rewrite docs/img/* (a few seconds with a warm score cache)
    PYTHONPATH=src python tools/docs_images.py --list    # the images it makes, one a line

It runs the quickstart's command (`attrib-audit demo --scorers lexical,minilm`) in a scratch folder, so the
report names its folder `attrib-audit-demo` as the pages do and never the scratch path; checks the report in
headless Chromium with `attrib-audit report --screenshot` (it fails on console errors, network requests or broken
images); keeps the top of that screenshot, from the title to the end of the AUROC heatmap; and copies the plots
the pages show. The PNG carries the command, the report's source line and its headline as text chunks, so
tests/test_docs_images.py can tell an image that no longer matches the pages without rerunning anything.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IMG = ROOT / "docs" / "img"
DEMO = ("demo", "--scorers", "lexical,minilm")  # the quickstart's command, whose output the home page describes
FOLDER = "attrib-audit-demo"
SCREENSHOT = "report-demo.png"
PLOTS = ("auroc_heatmap.svg", "auroc_forest.svg", "lodo_regret.svg")
IMAGES = (SCREENSHOT, *PLOTS)  # every file of docs/img, each made by this script
WIDTH = 960  # px of the saved screenshot (the report is drawn 1280 px wide)
CROP_AT = "#fig-auroc_heatmap"  # the screenshot ends at the bottom of this element
# what the report page says, read in the browser; stored in the PNG for the test
FACTS = """JSON.stringify({
  bottom: Math.ceil(document.querySelector('%s').getBoundingClientRect().bottom + window.scrollY) + 16,
  meta: document.querySelector('.meta') ? document.querySelector('.meta').textContent : '',
  headline: Array.from(document.querySelectorAll('#headline p')).map(p => p.textContent.trim())
})""" % CROP_AT


def _attrib_audit(*argv: str, cwd: Path) -> str:
    """Run this checkout's CLI in `cwd`, offline; its stdout (exit on failure with its stderr)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in [str(ROOT / "src"), os.environ.get("PYTHONPATH")]
                                                         if p), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    run = subprocess.run([sys.executable, "-m", "attrib_audit", *argv], cwd=cwd, env=env, capture_output=True,
                         text=True)
    if run.returncode != 0:
        sys.exit(f"docs_images: `attrib-audit {' '.join(argv)}` failed (exit {run.returncode}):\n{run.stderr[-2000:]}")
    return run.stdout


def _page_facts(html: Path) -> dict:
    sys.path.insert(0, str(ROOT / "src"))
    from attrib_audit.report.browser import Browser

    with Browser() as browser:
        tab = browser.new_tab()
        tab.navigate(html.resolve().as_uri())
        return json.loads(tab.evaluate(FACTS))


def regenerate(out: Path = IMG) -> list[Path]:
    """Run the demo, check and screenshot its report, and write every image of IMAGES into `out`."""
    from PIL import Image
    from PIL.PngImagePlugin import PngInfo

    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="docs-images-") as scratch:
        cwd = Path(scratch)
        _attrib_audit(*DEMO, "--quiet", cwd=cwd)
        print(_attrib_audit("report", FOLDER, "--screenshot", "full.png", cwd=cwd).strip().splitlines()[-1])
        facts = _page_facts(cwd / FOLDER / "report.html")
        if scratch in facts["meta"] or scratch in " ".join(facts["headline"]):
            sys.exit(f"docs_images: the report names the scratch folder: {facts['meta']}")
        full = Image.open(cwd / "full.png")
        top = full.crop((0, 0, full.width, min(full.height, facts["bottom"]))).convert("RGB")
        top = top.resize((WIDTH, round(top.height * WIDTH / top.width)), Image.Resampling.LANCZOS)
        info = PngInfo()
        info.add_text("Source", "attrib-audit " + " ".join(DEMO))
        info.add_text("Meta", facts["meta"])
        info.add_text("Headline", "\n".join(facts["headline"]))
        written = [out / SCREENSHOT]
        top.save(written[0], optimize=True, pnginfo=info)
        for name in PLOTS:
            shutil.copyfile(cwd / FOLDER / "plots" / name, out / name)
            written.append(out / name)
    return written


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--list", action="store_true", help="print the images this script makes and exit")
    p.add_argument("--out", type=Path, default=IMG, help="folder to write them to (default docs/img)")
    args = p.parse_args(argv)
    if args.list:
        print("\n".join(IMAGES))
        return 0
    for path in regenerate(args.out):
        print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
