"""The `attrib-audit` argument parser: every command, in the order `--help` lists them.

Building it imports no model library, scipy, matplotlib, pandas, ray or datasets: the command modules import what
needs them inside the command functions, when a command runs (tests/test_layers.py checks every command's --help).
Every command's help opens with its one-line summary and ends with examples (`EXAMPLES`), and `commands` walks the
tree: the docs' CLI reference is generated from it, so the reference cannot drift from the parser.
"""
from __future__ import annotations

import argparse
from typing import Any, Iterator, NoReturn

from attrib_audit import __version__
from attrib_audit.cli import (
    audit,
    cache,
    metaeval,
    models,
    probe,
    provenance,
    report,
    reproduce,
    results,
    score,
    systems,
    threshold,
    validate,
)

# the flags that name where a command writes: never registered as its inputs, and they get --force
OUTPUT_FLAGS = ("out", "export")
DESCRIPTION = ("Audit whether faithfulness/attribution metrics transfer across datasets, against human labels: "
               "per dataset AUROC with clustered-bootstrap CIs, and which metric to use per construct. "
               "`attrib-audit COMMAND --help` shows a command's options and examples.")
# (module, function adding its subcommand), in --help order
COMMANDS = ((audit, "add_audit"), (audit, "add_demo"), (score, "add_score"), (models, "add_models"),
            (models, "add_datasets"), (metaeval, "add_convert"), (cache, "add_cache"), (results, "add_select"),
            (systems, "add_systems"),
            (threshold, "add_threshold"),
            (probe, "add_probe"), (provenance, "add_provenance"),
            (report, "add_report"), (results, "add_agree"), (validate, "add_plan"), (validate, "add_sample"),
            (validate, "add_label"), (reproduce, "add_reproduce"))

# Examples printed at the end of each command's --help (and in the docs' reference); tests/test_cli.py parses each.
# They use the packaged demo (`attrib-audit demo` writes attrib-audit-demo/) or files named for what they hold.
EXAMPLES: dict[str, tuple[str, ...]] = {
    "": ("attrib-audit demo",
         "attrib-audit audit pairs.jsonl --construct attribution --out out/",
         "attrib-audit select --results out/",
         "attrib-audit threshold --results out/ --max-false-pass 0.1"),
    "audit": ("attrib-audit audit pairs.jsonl --construct attribution --out out/",
              "attrib-audit audit pairs.jsonl --scorers lexical,minilm --score-col mine=my_metric --out out/ --report",
              "attrib-audit audit --config audit.toml --out out/",
              "attrib-audit audit --check out/"),
    "demo": ("attrib-audit demo",
             "attrib-audit demo --scorers lexical,minilm --out demo-small -v"),
    "score": ("attrib-audit score pairs.jsonl --scorers lexical,minilm --out scores.parquet",
              "attrib-audit score big.parquet --chunk-rows 50000 --out scores.parquet"),
    "models": ("attrib-audit models list",
               "attrib-audit models check minilm",
               "attrib-audit models install mpnet"),
    "models list": ("attrib-audit models list",),
    "models check": ("attrib-audit models check lexical",
                     "attrib-audit models check nli-mnli --model-path nli-mnli=/models/roberta-large-mnli"),
    "models install": ("attrib-audit models install mpnet",
                       "attrib-audit models install judge"),
    "convert": ("attrib-audit convert summeval model_annotations.aligned.jsonl --out summeval.jsonl",
                "attrib-audit convert frank human_annotations.json baseline_factuality_metrics_outputs.json "
                "--out frank.jsonl"),
    "convert summeval": ("attrib-audit convert summeval model_annotations.aligned.jsonl --out summeval.jsonl",
                         "attrib-audit convert summeval model_annotations.aligned.jsonl --aspect relevance "
                         "--annotators turker --out relevance.jsonl"),
    "convert frank": ("attrib-audit convert frank human_annotations.json baseline_factuality_metrics_outputs.json "
                      "--out frank.jsonl",),
    "cache": ("attrib-audit cache show",
              "attrib-audit cache limit 128",
              "attrib-audit cache clear"),
    "cache show": ("attrib-audit cache show",
                   "attrib-audit cache show --cache run/scores.sqlite"),
    "cache clear": ("attrib-audit cache clear",),
    "cache limit": ("attrib-audit cache limit 128",),
    "datasets": ("attrib-audit datasets",
                 "attrib-audit datasets --json"),
    "select": ("attrib-audit select --results attrib-audit-demo",
               "attrib-audit select --results out/ --construct attribution --scorers lexical,minilm --eps 0.02",
               "attrib-audit select --results out/ --level system"),
    "systems": ("attrib-audit systems --results out/",
                "attrib-audit systems pairs.jsonl --system-col model --scorers lexical,minilm"),
    "threshold": ("attrib-audit threshold --results attrib-audit-demo --max-false-pass 0.1",
                  "attrib-audit threshold --results out/ --min-precision 0.95 --recalibrate isotonic -v",
                  "attrib-audit threshold pairs.jsonl --scorers lexical --max-false-pass 0.05 --out out/"),
    "probe": ("attrib-audit probe compare",
              "attrib-audit probe compare BASE.jsonl TUNED.jsonl --data asqa.jsonl --out probe/"),
    "probe compare": ("attrib-audit probe compare",
                      "attrib-audit probe compare BASE.jsonl TUNED.jsonl --data asqa.jsonl --out probe/"),
    "probe train": ("attrib-audit probe train --model Qwen/Qwen2.5-3B-Instruct --data asqa_train.jsonl "
                    "--out runs/grpo --device cuda --bf16 --max-steps 500",),
    "provenance": ("attrib-audit provenance wice_provenance.jsonl --rankers lexical,minilm,blend,eq1 --out prov/",
                   "attrib-audit provenance alce.json --format alce --confusable 0 --out prov/"),
    "report": ("attrib-audit report attrib-audit-demo",
               "attrib-audit report out/ --out report/ --screenshot shot.png"),
    "agree": ("attrib-audit agree --results out/ --a judge-label --b human",
              "attrib-audit agree --results out/ --a minilm --b human --threshold 0.6"),
    "plan": ("attrib-audit plan --results attrib-audit-demo --half-width 0.05 --detect 0.05",
             "attrib-audit plan --auroc 0.8 --prevalence 0.3 --half-width 0.05 --pairs-per-cluster 3 --icc 0.2",
             "attrib-audit plan --results out/ --max-false-pass 0.1"),
    "sample": ("attrib-audit sample pool.jsonl --n 400 --strategy disagreement --cluster-by question "
               "--out to_label.jsonl",),
    "label": ("attrib-audit label to_label.jsonl --annotator alice",
              "attrib-audit label to_label.jsonl --export labelled.jsonl --annotator alice"),
    "reproduce": ("attrib-audit reproduce --data-dir DIR --tables 2a,10 --out repro/",
                  "attrib-audit reproduce --download DIR"),
}


class OneLineParser(argparse.ArgumentParser):
    """A usage error is one line naming the command and pointing at its --help, like every other refusal: argparse's
    own error() prints the whole usage block first (36 lines for `audit`) and buries the reason under it.
    Subcommand parsers inherit the class through add_subparsers."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")

    def _get_values(self, action: argparse.Action, arg_strings: list[str]) -> Any:
        """`--n-boot=--` is the value "--", checked by the flag's type: argparse drops a "--" it takes for the end
        of options and stores [], which no type check ever sees."""
        if action.option_strings and action.nargs is None and arg_strings == ["--"]:
            return self._get_value(action, "--")
        return super()._get_values(action, arg_strings)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="attrib-audit", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"attrib-audit {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module, add in COMMANDS:
        getattr(module, add)(sub)
    for name, p, summary in commands(parser):
        if any(a.dest in OUTPUT_FLAGS for a in p._actions):  # --force on every command that writes, on no other
            p.add_argument("--force", action="store_true",
                           help="replace an existing output that attrib-audit did not write, or a symbolic link "
                                "there (the link itself, never its target); inputs of the command are never "
                                "overwritten")
        p.formatter_class = argparse.RawDescriptionHelpFormatter  # keep the examples one per line
        p.description = p.description or summary[:1].upper() + summary[1:] + "."
        p.epilog = "Examples:\n" + "\n".join(f"  {line}" for line in EXAMPLES[name])
    return parser


def commands(parser: argparse.ArgumentParser, prefix: str = "",
             summary: str | None = None) -> Iterator[tuple[str, argparse.ArgumentParser, str]]:
    """(name, parser, one-line summary) of the top level ("") and every (sub)command below it, in --help order."""
    yield prefix, parser, (parser.description or "") if summary is None else summary
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            for name, child in action.choices.items():
                yield from commands(child, f"{prefix} {name}".strip(), helps[name])
