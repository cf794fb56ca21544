"""Scorers from outside the package: the `attrib_audit.scorers` entry-point group and `module:factory` paths.

A plugin is a factory (any callable taking keyword options) that returns an object with the
Scorer protocol. A plugin that cannot be imported, fails to build or returns something that is not a
Scorer raises PluginError, one line naming the plugin, so a bad plugin is neither a traceback nor skipped.
A factory may raise ScorerUnavailable (weights absent) and is then skipped like a built-in.
"""
from __future__ import annotations

import importlib
import importlib.metadata as md
from typing import Any, Callable, Sequence

import numpy as np

from attrib_audit.errors import AuditError
from attrib_audit.scorers.base import ScoreBatch, Scorer, ScorerLoadError, ScorerSpec, ScorerUnavailable, ScorerView

GROUP = "attrib_audit.scorers"
# what a plugin may raise on purpose and the engine handles itself (weights absent or broken, a backend down)
_PASS_THROUGH = (ScorerUnavailable, ScorerLoadError, AuditError)


class PluginError(AuditError, RuntimeError):
    """A plugin scorer could not be imported or built; the message is one line naming it (and says it is a
    plugin, so the CLI adds no kind before it)."""

    exit_code = 2
    kind = ""


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
    try:
        missing = [a for a in ("name", "signature", "score") if not hasattr(scorer, a)]
        name = getattr(scorer, "name", None)
    except _PASS_THROUGH:
        raise
    except Exception as exc:  # a property of the plugin's own that raises
        raise PluginError(f"plugin {plugin!r}: reading its name or signature failed: {_one_line(exc)}") from None
    if missing or not callable(getattr(scorer, "score", None)):
        raise PluginError(f"plugin {plugin!r}: the factory returned a {type(scorer).__name__} without "
                          f"{', '.join(missing) or 'a callable score'} (see docs/how-to/own-metric.md)")
    if not isinstance(name, str) or not name.strip():
        raise PluginError(f"plugin {plugin!r}: its name is {name!r}, not a non-empty string")
    return CheckedPlugin(scorer, plugin)


class CheckedPlugin(ScorerView):
    """A plugin scorer whose every answer is checked before the engine uses it: code we did not write may return
    anything, and a wrong count, a NaN without its reason or an infinity must stop the run in one line naming the
    plugin, never become a number or a traceback far from it. Anything else (name, batch_size, wants_questions,
    ...) is the plugin's own, or the Scorer protocol's default where the plugin has none."""

    def __init__(self, inner: Any, plugin: str) -> None:
        super().__init__(inner)
        self._plugin = plugin

    def _fail(self, what: str) -> PluginError:
        return PluginError(f"plugin {self._plugin!r}: {what} (see docs/how-to/own-metric.md)")

    @property
    def signature(self) -> str:
        try:
            sig = self._inner.signature
        except _PASS_THROUGH:
            raise
        except Exception as exc:  # the plugin's code may fail in any way: one line naming it
            raise PluginError(f"plugin {self._plugin!r}: reading its signature failed: {_one_line(exc)}") from None
        if not isinstance(sig, str) or not sig.strip():
            raise self._fail(f"its signature is {sig!r}, not a non-empty string (the score cache keys on it)")
        return sig

    def score(self, claims: Sequence[str], evidences: Sequence[str], **kwargs: Any) -> ScoreBatch:
        try:
            batch = self._inner.score(claims, evidences, **kwargs)
        except _PASS_THROUGH:
            raise
        except Exception as exc:
            raise PluginError(f"plugin {self._plugin!r}: score() failed: {_one_line(exc)}") from None
        return self._checked(batch, len(claims))

    def _checked(self, batch: Any, n: int) -> ScoreBatch:
        """`batch` as a ScoreBatch of n finite scores (NaN only with a failure reason), or PluginError."""
        if not isinstance(batch, ScoreBatch):
            raise self._fail(f"score() returned a {type(batch).__name__}, not a ScoreBatch (return "
                             "ScoreBatch.plain(scores))")
        try:
            raw = np.asarray(batch.scores)
        except (TypeError, ValueError, OverflowError):  # ragged lists: no array at all
            raw = np.asarray(None)
        if raw.dtype.kind not in "fiu" or raw.ndim != 1:
            raise self._fail(f"score() returned scores of {raw.dtype} and shape {raw.shape}, not one number per pair")
        if len(raw) != n:
            raise self._fail(f"score() returned {len(raw)} scores for {n} pairs")
        failures = list(batch.failures) if isinstance(batch.failures, (list, tuple)) else None
        if failures is None or not all(f is None or isinstance(f, str) for f in failures):
            raise self._fail("score() returned failures that are not a list of reasons (text) or None per pair")
        try:
            checked = ScoreBatch(scores=raw.astype(np.float64), truncated_tokens=batch.truncated_tokens,
                                 input_tokens=batch.input_tokens, chunks=batch.chunks, failures=failures,
                                 extras=dict(batch.extras))
        except (TypeError, ValueError) as exc:
            raise self._fail(f"score() returned a malformed ScoreBatch: {_one_line(exc)}") from None
        inf = np.flatnonzero(np.isinf(checked.scores))
        if inf.size:
            raise self._fail(f"score() returned {checked.scores[inf[0]]} for pair {inf[0] + 1} of a batch of {n}; a "
                             "score must be finite (NaN with a failure reason marks a pair it could not score)")
        return checked


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

        dist = getattr(ep, "dist", None)
        specs[ep.name] = ScorerSpec(name=ep.name, factory=build, description=f"plugin scorer ({ep.value})",
                                    family="plugin", check=check,
                                    install=f"pip install {dist.metadata['Name'] if dist is not None else '<package>'}")
    return specs, clashes
