"""The catalogue of scorers (the registry): every built-in family, listed explicitly, plus the scorers other
packages plug in.

Importing this module imports each built-in family module, and each registers its scorers (`base.register`)
as it is imported; nothing else registers a built-in. Plugins come from the `attrib_audit.scorers` entry-point
group (discovered on each call, so a package installed mid-session is seen) or a `module:factory` path
(scorers.plugins). A family's module imports nothing heavy at module level: listing the registry
(`models list`) never loads torch.
"""
from __future__ import annotations

from typing import Any, Mapping

# every built-in family registers its scorers on import
from attrib_audit.scorers import (  # noqa: F401
    alignscore,
    bertscore,
    bespoke,
    blend,
    cross_encoder,
    embedding,
    hhem,
    judge,
    lexical,
    minicheck,
    nli,
)
from attrib_audit.scorers.base import _REGISTRY, Scorer, ScorerOptionError, ScorerSpec
from attrib_audit.scorers.plugins import entry_point_specs, import_path_scorer, is_import_path


def registry() -> dict[str, ScorerSpec]:
    """Built-in scorers and the installed `attrib_audit.scorers` entry points (discovered on each call).

    Returns:
        Scorer name → its spec (factory, options, what it needs to run).

    Examples:
        >>> "lexical" in registry()
        True
    """
    return {**entry_point_specs(set(_REGISTRY))[0], **_REGISTRY}


def scorer_spec(name: str) -> ScorerSpec:
    """The registry entry of a built-in or entry-point scorer (a built-in needs no scan of the entry points)."""
    specs = _REGISTRY if name in _REGISTRY else registry()
    if name not in specs:
        raise ScorerOptionError(f"unknown scorer {name!r}; known: {', '.join(sorted(specs))}")
    return specs[name]


def check_options(name: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """The options `name`'s factory is called with: `device` is dropped for scorers that run on no device,
    any other unknown key is a ScorerOptionError naming the valid ones."""
    accepted = scorer_spec(name).option_names()
    opts = dict(options)
    if accepted is None:
        return opts
    if "device" not in accepted:
        opts.pop("device", None)
    unknown = sorted(set(opts) - set(accepted))
    if unknown:
        valid = ", ".join(sorted(a for a in accepted if a != "device")) or "none"
        raise ScorerOptionError(f"scorer {name!r} has no option{'s' if len(unknown) > 1 else ''} "
                                f"{', '.join(unknown)}; valid: {valid}")
    return opts


def get_scorer(name: str, **options: Any) -> Scorer:
    """Build a registered scorer or a `module:factory` plugin.

    Args:
        name: A registered name (`registry()`) or "module:factory".
        **options: The factory's options (e.g. device="cuda", model paths); `device` is dropped for
            scorers that run on no device.

    Returns:
        The scorer, ready to `score(claims, evidences)`.

    Raises:
        ScorerUnavailable: It cannot run here (one-line reason: a missing extra or model).
        ScorerOptionError: An unknown name, or an option its factory does not take.
        PluginError: A `module:factory` that cannot be imported or built.

    Examples:
        >>> get_scorer("lexical").score(["The sky is blue."], ["The sky is blue today."]).scores.tolist()
        [0.8]
    """
    if is_import_path(name):
        return import_path_scorer(name, **options)
    return scorer_spec(name).factory(**check_options(name, options))


def plugin_clashes() -> list[str]:
    """Entry points left out because their name is taken (what `models list` prints after the scorers)."""
    return entry_point_specs(set(_REGISTRY))[1]
