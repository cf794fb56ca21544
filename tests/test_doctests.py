"""The examples in the public docstrings run, and print what they say (doctest), so the documentation of the main
entry points cannot drift from the code. Each example uses tiny data or the packaged demo with few resamples."""
from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "attrib_audit.audit.run",
    "attrib_audit.audit.select",
    "attrib_audit.data.demo",
    "attrib_audit.data.loaders",
    "attrib_audit.external.precomputed",
    "attrib_audit.scorers.catalog",
    "attrib_audit.stats.agreement",
    "attrib_audit.stats.auroc",
    "attrib_audit.stats.bootstrap",
    "attrib_audit.stats.calibration",
    "attrib_audit.stats.classification",
    "attrib_audit.stats.means",
    "attrib_audit.stats.proportion",
    "attrib_audit.stats.rank",
    "attrib_audit.stats.rng",
    "attrib_audit.stats.sensitivity",
    "attrib_audit.stats.systems",
    "attrib_audit.stats.threshold",
    "attrib_audit.stats.types",
]
MAIN_ENTRY_POINTS = ["audit.run.run_audit", "audit.select.select_from_results", "stats.threshold.certify",
                     "stats.auroc.auroc", "stats.auroc.cluster_auroc", "stats.bootstrap.clustered_auroc_ci",
                     "stats.systems.summarise_systems"]


@pytest.mark.parametrize("name", MODULES)
def test_the_examples_of_a_module_run_as_written(name):
    module = importlib.import_module(name)  # not attribute access: stats.auroc is also a function's name
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, report=True)
    assert result.attempted > 0, f"{name} has no example"
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {name} failed (printed above)"


@pytest.mark.parametrize("path", MAIN_ENTRY_POINTS)
def test_every_main_entry_point_has_an_example_and_google_style_sections(path):
    mod, func = path.rsplit(".", 1)
    doc = getattr(importlib.import_module(f"attrib_audit.{mod}"), func).__doc__ or ""
    assert ">>> " in doc and "Args:" in doc and "Returns:" in doc, path
