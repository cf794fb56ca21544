"""The data provenance a reader needs to reproduce the audit: files and hashes, scorer signatures,
tool version, seeds and the command line."""
from __future__ import annotations

import math
import shlex
from pathlib import Path

from attrib_audit.audit.results import AuditResults
from attrib_audit.data.origin import FileRef
from attrib_audit.files.records import to_record
from attrib_audit.report.blocks import Code, Para, Section, Table


def command(results: AuditResults) -> str:
    """The command the audit recorded (every option it was run with); older results: rebuilt from the config."""
    if results.command is not None:
        return shlex.join(results.command)
    cfg = results.config
    args = ["attrib-audit", "audit", *[d.path for d in results.data],
            "--scorers", ",".join(cfg.scorers), "--slice-by", cfg.slice_by,
            "--n-boot", str(cfg.n_boot), "--seed", str(cfg.seed), "--out", "OUT"]
    return " ".join(shlex.quote(a) for a in args)


def build(inputs, plots: Path) -> Section | None:
    results = inputs.results
    if results is None:
        return None
    sec = Section("reproduce", "Reproduce this audit")
    sec.add(Table(["file", "rows", "sha256"], [[d.path, str(d.rows), d.sha256 if isinstance(d, FileRef) else ""]
                                                for d in results.data], "Input files as loaded."))
    sec.add(Table(["scorer", "signature", "pairs", "scored anew", "from cache"],
                  [[s.scorer, s.signature, str(s.n_pairs), str(s.n_scored), str(s.n_cached)] for s in results.scorers],
                  "Scorer signatures: a changed signature means a changed score (model, window, prompt, weights)."))
    tool = results.tool
    facts = [["tool", f"{tool.name} {tool.version}"], ["python", tool.python], ["platform", tool.platform]]
    # every setting as results.json writes it (a key the config omits is not shown)
    facts += [[k, ", ".join(map(str, v)) if isinstance(v, list) else str(v)]
              for k, v in to_record(results.config).items()]
    if math.isfinite(results.elapsed_s):
        facts.append(["elapsed", f"{results.elapsed_s} s"])
    sec.add(Table(["setting", "value"], facts, "Tool, configuration and seeds."))
    sec.add(Para("Re-run this configuration (an API key is read from the environment variable named by "
                 "--judge-api-key-env; credentials inside a judge URL are not recorded):"),
            Code(command(results)))
    return sec
