"""The docs' images are the ones tools/docs_images.py makes from a real run, and they match the pages' text.

Cheap: nothing is rerun. The script stores, in the screenshot's text chunks, the command it ran, the report's
source line and its headline; the quickstart's output block is checked against a real run by test_docs.py, so
an image whose headline disagrees with that block is stale (rerun `PYTHONPATH=src python tools/docs_images.py`).
"""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
IMG = ROOT / "docs" / "img"
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])


def _script():
    spec = importlib.util.spec_from_file_location("docs_images", ROOT / "tools" / "docs_images.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _referenced() -> dict[str, list[str]]:
    """Image file name → the pages that show it (Markdown image links into img/)."""
    out: dict[str, list[str]] = {}
    for page in PAGES:
        for name in re.findall(r"!\[[^\]]*\]\((?:\.\./)*(?:docs/)?img/([^)\s]+)\)", page.read_text(encoding="utf-8")):
            out.setdefault(name, []).append(page.relative_to(ROOT).as_posix())
    return out


def test_every_docs_image_is_made_by_the_script_and_shown_by_a_page():
    made = set(_script().IMAGES)
    assert made == {p.name for p in IMG.iterdir()}, "docs/img holds an image the script does not make, or lacks one"
    shown = _referenced()
    assert set(shown) == made, f"pages show {sorted(set(shown) - made)}; never shown: {sorted(made - set(shown))}"


def test_the_report_screenshot_is_of_the_quickstart_run_and_names_no_scratch_folder():
    script = _script()
    text = Image.open(IMG / script.SCREENSHOT).text
    assert text["Source"] == "attrib-audit " + " ".join(script.DEMO)
    assert f"read from {script.FOLDER}/results.json" in text["Meta"]
    assert not re.search(r"(/tmp|/home/|/root/|[A-Z]:\\)", text["Meta"] + text["Headline"])
    quickstart = (ROOT / "docs" / "quickstart.md").read_text(encoding="utf-8")
    assert f"attrib-audit {' '.join(script.DEMO)}\n" in quickstart  # the page runs the command the image shows
    for construct in ("attribution", "boundary-dialogue"):
        page = re.search(rf"^  {construct} \(\d+ datasets\): use (\S+) ", quickstart, re.M)
        image = re.search(rf"^{construct} \(\d+ datasets\): use (\S+?),", text["Headline"], re.M)
        assert page and image and page.group(1) == image.group(1), (
            f"{construct}: the quickstart recommends {page and page.group(1)}, the image "
            f"{image and image.group(1)}; rerun tools/docs_images.py")
