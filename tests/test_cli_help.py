"""Every command's --help reads like the docs' reference: a one-line summary first, examples last, and every
example is a command line the real parser accepts (so an example cannot name a flag that is gone)."""
import shlex

import pytest

from attrib_audit.cli.parser import EXAMPLES, build_parser, commands

PARSER = build_parser()
ALL = list(commands(PARSER))


def test_every_command_and_subcommand_has_examples_and_nothing_else_does():
    names = [name for name, _, _ in ALL]
    assert len(names) == len(set(names)) > 20
    assert set(EXAMPLES) == set(names)


@pytest.mark.parametrize("name,parser,summary", ALL, ids=[n or "attrib-audit" for n, _, _ in ALL])
def test_help_opens_with_a_one_line_summary_and_ends_with_examples(name, parser, summary):
    text = parser.format_help()
    assert summary and "\n" not in summary
    assert summary[:1].upper() + summary[1:] in " ".join(text.split())  # the description, however argparse wraps it
    head, examples = text.rstrip("\n").split("\nExamples:\n")
    lines = examples.splitlines()
    assert lines == [f"  {e}" for e in EXAMPLES[name]]
    assert all(e.startswith(f"attrib-audit {name}") for e in EXAMPLES[name])


@pytest.mark.parametrize("name,line", [(n, e) for n, es in EXAMPLES.items() for e in es])
def test_each_example_parses_as_the_command_it_documents(name, line):
    args = PARSER.parse_args(shlex.split(line)[1:])
    path = " ".join(v for v in (args.command, getattr(args, "action", None), getattr(args, "probe_command", None)) if v)
    assert f"{path} ".startswith(f"{name} ".lstrip())  # a group's examples run one of its subcommands
