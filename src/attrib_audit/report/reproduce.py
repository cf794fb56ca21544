"""The data provenance a reader needs to reproduce the audit: files and hashes, scorer signatures,
tool version, seeds and the command line."""
from __future__ import annotations

import shlex
from pathlib import Path

from attrib_audit.report.blocks import Code, Para, Section, Table


def command(results: dict) -> str:
    """The command the audit recorded (every option it was run with); older results: rebuilt from the config."""
    recorded = results.get("command")
    if isinstance(recorded, list) and all(isinstance(a, str) for a in recorded):
        return shlex.join(recorded)
    cfg = results.get("config", {})
    args = ["attrib-audit", "audit", *[str(d["path"]) for d in results.get("data", [])],
            "--scorers", ",".join(cfg.get("scorers", [])), "--slice-by", str(cfg.get("slice_by", "dataset")),
            "--n-boot", str(cfg.get("n_boot", "")), "--seed", str(cfg.get("seed", "")), "--out", "OUT"]
    return " ".join(shlex.quote(a) for a in args)


def build(inputs, plots: Path) -> Section | None:
    results = inputs.results
    if not results:
        return None
    sec = Section("reproduce", "Reproduce this audit")
    data = results.get("data", [])
    sec.add(Table(["file", "rows", "sha256"], [[str(d["path"]), str(d.get("rows", "")), str(d.get("sha256", ""))]
                                                for d in data], "Input files as loaded."))
    sec.add(Table(["scorer", "signature", "pairs", "scored anew", "from cache"],
                  [[s["scorer"], s["signature"], str(s.get("n_pairs", "")), str(s.get("n_scored", "")),
                    str(s.get("n_cached", ""))] for s in results.get("scorers", [])],
                  "Scorer signatures: a changed signature means a changed score (model, window, prompt, weights)."))
    tool, cfg = results.get("tool", {}), results.get("config", {})
    facts = [["tool", f"{tool.get('name', 'attrib-audit')} {tool.get('version', '?')}"],
             ["python", str(tool.get("python", "?"))], ["platform", str(tool.get("platform", "?"))]]
    facts += [[k, ", ".join(map(str, v)) if isinstance(v, list) else str(v)] for k, v in cfg.items()]
    if "elapsed_s" in results:
        facts.append(["elapsed", f"{results['elapsed_s']} s"])
    sec.add(Table(["setting", "value"], facts, "Tool, configuration and seeds."))
    sec.add(Para("Re-run this configuration (an API key is read from the environment variable named by "
                 "--judge-api-key-env; credentials inside a judge URL are not recorded):"),
            Code(command(results)))
    return sec
