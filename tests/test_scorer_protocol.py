"""The Scorer protocol's optional attributes and their defaults, and the errors a scorer or plugin raises: each an
AuditError, so the command line prints its one line and exit code with no special case."""
from __future__ import annotations

import importlib
import pkgutil
import textwrap

import numpy as np
import pytest

import attrib_audit
from attrib_audit.cli import main
from attrib_audit.data.demo import demo_paths
from attrib_audit.engine import score_pairs
from attrib_audit.errors import AuditError
from attrib_audit.scorers.base import ScoreBatch, Scorer, ScorerLoadError, ScorerView, as_scorer
from attrib_audit.scorers.knownanswers import check_scorer
from attrib_audit.scorers.lexical import LexicalScorer
from attrib_audit.scorers.plugins import CheckedPlugin, PluginError

BEGIN = next(p for p in demo_paths() if p.name.startswith("begin"))
FAST = ["--n-boot", "20", "--n-perm", "20", "--quiet", "--no-cache"]


class Bare:
    """A scorer with only the protocol's required members, counting the batches it is given."""

    name = "bare"

    def __init__(self) -> None:
        self.batches: list[int] = []

    @property
    def signature(self) -> str:
        return "bare:v1"

    def score(self, claims, evidences) -> ScoreBatch:
        self.batches.append(len(claims))
        return ScoreBatch.plain([len(c) / (len(c) + len(e) + 1) for c, e in zip(claims, evidences)])


def test_the_protocol_declares_its_optional_attributes_with_defaults():
    assert (Scorer.window, Scorer.batch_size, Scorer.wants_questions) == (None, 32, False)
    seen = as_scorer(Bare())
    assert isinstance(seen, ScorerView) and isinstance(seen, Scorer)
    assert (seen.name, seen.signature, seen.window, seen.batch_size, seen.wants_questions) == \
        ("bare", "bare:v1", None, 32, False)


def test_what_a_scorer_declares_is_its_own():
    class Own(Bare):
        window, batch_size = 77, 5

    class Unset(Bare):
        window = batch_size = None  # None: the default, as a missing one

    seen = as_scorer(Own())
    assert (seen.window, seen.batch_size, seen.wants_questions) == (77, 5, False)
    assert (as_scorer(Unset()).window, as_scorer(Unset()).batch_size) == (None, 32)
    lexical = LexicalScorer()
    assert as_scorer(lexical) is lexical  # a built-in subclasses Scorer and declares them all
    assert (lexical.window, lexical.batch_size, lexical.wants_questions) == (None, 4096, False)


def test_as_scorer_reads_no_property():
    class Lazy(Bare):
        @property
        def batch_size(self) -> int:
            raise AssertionError("reading batch_size would load a model")

        window = wants_questions = None

    lazy = Lazy()
    assert as_scorer(lazy) is lazy


def test_score_pairs_batches_a_bare_scorer_at_the_protocol_default():
    bare = Bare()
    claims, evidences = [f"claim {i}" for i in range(70)], [f"evidence {i}" for i in range(70)]
    batch, stats = score_pairs(bare, claims, evidences, quiet=True)
    assert bare.batches == [32, 32, 6] and stats.scorer == "bare"
    assert np.allclose(batch.scores, [len(c) / (len(c) + len(e) + 1) for c, e in zip(claims, evidences)])
    assert check_scorer(Bare()).scorer == "bare"  # the known-answer check reads the same defaults


def test_a_plugin_without_optional_attributes_gets_the_defaults():
    plugin = CheckedPlugin(Bare(), "m:make")
    assert (plugin.window, plugin.batch_size, plugin.wants_questions, plugin.name) == (None, 32, False, "bare")


@pytest.mark.parametrize("cls", [ScorerLoadError, PluginError])
def test_scorer_and_plugin_errors_are_audit_errors(cls):
    assert issubclass(cls, AuditError) and issubclass(cls, RuntimeError) and not issubclass(cls, ValueError)
    assert cls.exit_code == 2


def _plugin(tmp_path, monkeypatch, module: str, body: str) -> None:
    (tmp_path / f"{module}.py").write_text(textwrap.dedent(body))
    monkeypatch.syspath_prepend(str(tmp_path))


def test_weights_that_do_not_load_are_one_error_line_and_exit_2(tmp_path, monkeypatch, capsys):
    _plugin(tmp_path, monkeypatch, "loadplug", """\
        from attrib_audit.scorers.base import ScorerLoadError

        class Broken:
            name = "broken"
            signature = "broken:v1"

            def score(self, claims, evidences):
                raise ScorerLoadError("broken: weights at /w are present but do not load")

        def make():
            return Broken()
        """)
    rc = main(["audit", str(BEGIN), "--scorers", "loadplug:make", "--out", str(tmp_path / "o"), *FAST])
    assert rc == 2
    assert capsys.readouterr().err == "attrib-audit: error: broken: weights at /w are present but do not load\n"


def test_a_plugin_error_is_one_line_naming_the_plugin_and_exit_2(tmp_path, monkeypatch, capsys):
    _plugin(tmp_path, monkeypatch, "buildplug", """\
        def make():
            raise RuntimeError("no API key configured")
        """)
    rc = main(["audit", str(BEGIN), "--scorers", "buildplug:make", "--out", str(tmp_path / "o"), *FAST])
    assert rc == 2
    assert capsys.readouterr().err == ("attrib-audit: plugin 'buildplug:make': building it failed: RuntimeError: "
                                       "no API key configured\n")


# raised and caught inside the package: control flow, never shown to a user
INTERNAL = {"ScorerUnavailable", "LayoutError", "_Captured", "_Uncacheable", "_Unsure", "Skip", "_Mismatch",
            "NotRegularFile", "_Malformed"}


def test_every_error_class_the_package_defines_is_an_audit_error():
    found = {}
    for info in pkgutil.walk_packages(attrib_audit.__path__, "attrib_audit."):
        if info.name == "attrib_audit.__main__":  # importing it runs the command line
            continue
        module = importlib.import_module(info.name)
        for obj in vars(module).values():
            if isinstance(obj, type) and issubclass(obj, BaseException) and obj.__module__ == info.name:
                found[obj.__name__] = obj
    assert {"PluginError", "ScorerLoadError", "InputError", "BackendError"} <= set(found)
    assert INTERNAL <= set(found)  # the allowlist names real classes
    assert sorted(n for n, c in found.items() if n not in INTERNAL and not issubclass(c, AuditError)) == []
