"""Scorers from outside the package: the `attrib_audit.scorers` entry-point group and `module:factory` paths.

A plugin is a factory (any callable taking keyword options) that returns an object with the
Scorer protocol. A plugin that cannot be imported, fails to build or returns something that is not a
Scorer raises PluginError, one line naming the plugin, so a bad plugin is neither a traceback nor skipped.
A factory may raise ScorerUnavailable (weights absent) and is then skipped like a built-in.
"""
from __future__ import annotations

import importlib
import importlib.metadata as md
from typing import Any, Callable

from attrib_audit.scorers.base import Scorer, ScorerSpec, ScorerUnavailable

GROUP = "attrib_audit.scorers"


class PluginError(RuntimeError):
    """A plugin scorer could not be imported or built; the message is one line naming it."""


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def is_import_path(name: str) -> bool:
    """`pkg.module:factory` names a plugin by import path (built-in and entry-point names hold no ':')."""
    module, sep, attr = name.partition(":")
    return bool(sep and module and attr)


def load_factory(target: str, plugin: str) -> Callable[..., Any]:
    """Import `module:attr` (attr may be dotted); PluginError naming `plugin` if that fails."""
    module, _, attr = target.partition(":")
    try:
        obj: Any = importlib.import_module(module.strip())
        for part in attr.strip().split("."):
            obj = getattr(obj, part)
    except Exception as exc:  # an import may fail in any way; the user needs one line, not a traceback
        raise PluginError(f"plugin {plugin!r}: cannot import {target}: {_one_line(exc)}") from None
    if not callable(obj):
        raise PluginError(f"plugin {plugin!r}: {target} is a {type(obj).__name__}, not a callable factory")
    return obj


def build_plugin(factory: Callable[..., Any], plugin: str, options: dict[str, Any]) -> Scorer:
    """Call the factory with the scorer options and check that it returned a Scorer."""
    try:
        scorer = factory(**options)
    except ScorerUnavailable:
        raise
    except Exception as exc:
        raise PluginError(f"plugin {plugin!r}: building it failed: {_one_line(exc)}") from None
    missing = [a for a in ("name", "signature", "score") if not hasattr(scorer, a)]
    if missing or not callable(getattr(scorer, "score", None)):
        raise PluginError(f"plugin {plugin!r}: the factory returned a {type(scorer).__name__} without "
                          f"{', '.join(missing) or 'a callable score'} (see docs/how-to/own-metric.md)")
    return scorer


def import_path_scorer(target: str, **options: Any) -> Scorer:
    """`--scorers mymod:make_scorer`: no packaging needed, the module only has to be importable."""
    # `device` reaches every factory from AuditConfig; pass it on only to factories that accept it
    factory = load_factory(target, target)
    return build_plugin(factory, target, _accepted(factory, options))


def _accepted(factory: Callable[..., Any], options: dict[str, Any]) -> dict[str, Any]:
    import inspect

    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return options
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return options
    return {k: v for k, v in options.items() if k in params or k != "device"}


def _describe(ep: md.EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    who = f"{dist.metadata['Name']} {dist.version}" if dist is not None else "an unnamed distribution"
    return f"plugin from {who} (entry point {ep.name} = {ep.value})"


def entry_point_specs(builtin: set[str]) -> tuple[dict[str, ScorerSpec], list[str]]:
    """Registry entries for the installed `attrib_audit.scorers` entry points, and one line per name clash."""
    specs: dict[str, ScorerSpec] = {}
    clashes = []
    for ep in md.entry_points(group=GROUP):
        origin = _describe(ep)
        if ep.name in builtin or ep.name in specs or is_import_path(ep.name):
            clashes.append(f"{ep.name}: {origin} not used: the name is taken (rename the entry point)")
            continue

        def build(_ep: md.EntryPoint = ep, **options: Any) -> Scorer:
            factory = load_factory(_ep.value, _ep.name)
            return build_plugin(factory, _ep.name, _accepted(factory, options))

        def check(_ep: md.EntryPoint = ep, _origin: str = origin) -> tuple[bool, str]:
            try:
                load_factory(_ep.value, _ep.name)
            except PluginError as exc:
                return False, str(exc)
            return True, _origin

        specs[ep.name] = ScorerSpec(ep.name, build, f"plugin scorer ({ep.value})", "plugin", check,
                                    f"pip install {ep.dist.metadata['Name'] if getattr(ep, 'dist', None) else '<package>'}")
    return specs, clashes
