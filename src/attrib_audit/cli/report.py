"""`attrib-audit report DIR`: write report.html, report.md and plots/ from the results saved in DIR."""
from __future__ import annotations

import argparse
import sys

from attrib_audit.cli.options import add_report_inputs
from attrib_audit.report.browser import check_page
from attrib_audit.report.build import build_report


def write_report(folder, out=None, screenshot=None, png=False, **explicit) -> int:
    """Build the report, print where it is, and (with a screenshot path) check it in headless Chromium."""
    paths = build_report(folder, out, png=png, **explicit)
    for name in paths.ignored:
        print(f"[report] left out {name}: written by another run", file=sys.stderr)
    for key in paths.skipped:
        print(f"[report] section {key!r} skipped: its input has an unexpected layout (see the note in the report)",
              file=sys.stderr)
    print(f"report: {paths.html}\nmarkdown: {paths.markdown}\nplots: {len(paths.plots)} files in "
          f"{paths.html.parent / 'plots'}")
    if screenshot:
        check = check_page(paths.html, screenshot)
        print(check.summary())
        return 0 if check.ok else 1
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    return write_report(args.dir, args.out, args.screenshot, png=args.png, provenance=args.provenance, probe=args.probe,
                        agreement=args.agreement)


def add_report(sub) -> None:
    p = sub.add_parser("report", help="write a self-contained HTML + Markdown report with plots from saved results")
    p.add_argument("dir", help="results folder (results.json and any provenance.json, probe.json, agreement.json)")
    p.add_argument("--out", help="folder for report.html, report.md and plots/ (default: DIR)")
    add_report_inputs(p)
    p.add_argument("--png", action="store_true", help="also write each plot as PNG (the HTML embeds the SVGs)")
    p.add_argument("--screenshot", metavar="PNG",
                   help="open the HTML in headless Chromium, save a screenshot, and fail on console errors, "
                        "network requests or broken images")
    p.set_defaults(func=cmd_report)
