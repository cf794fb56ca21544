"""Hub-model plumbing shared by the model scorers: resolvers, `models list` checks, devices, fingerprints.

Weights resolve offline first: explicit path > $ATTRIB_AUDIT_<NAME> > installed package > hub id,
and a hub id counts as available only when it is already in the local Hugging Face cache.
"""
from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any, Callable

from attrib_audit.scorers.base import ScorerSpec, ScorerUnavailable
from attrib_audit.scorers.resolve import Resolved, offline, resolve_model


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


def hub_scorer_spec(name: str, hub_id: str, description: str, family: str, make: Callable[..., Any]) -> ScorerSpec:
    """The registry entry of a hub-only model scorer: resolve offline first, report honestly, hint how to install.

    `make(resolved, device=..., install_hint=..., **options)` builds the scorer.
    """
    resolver = hub_resolver(name, hub_id)
    hint = hub_install_hint(name, hub_id)

    def build(path: str | None = None, device: str = "cpu", **opts: Any):
        return make(resolver(path), device=device, install_hint=hint, **opts)

    return ScorerSpec(name, build, description, family, lambda: check_resolved(resolver), hint)


def check_resolved(resolver) -> tuple[bool, str]:
    """The foundation's `models list` rule (a bare hub id is absent unless cached), for a resolver."""
    from attrib_audit.scorers import _check

    return _check(resolver)


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


def weights_fingerprint(resolved: Resolved) -> str:
    """Short hash of config, file sizes and the head and tail of each weight file: new weights, new signature."""
    location = Path(resolved.location)
    if not location.exists():
        try:
            from huggingface_hub import try_to_load_from_cache

            cached = try_to_load_from_cache(resolved.location, "config.json")
        except ImportError:  # pragma: no cover - ships with transformers
            cached = None
        if not isinstance(cached, str):
            return "hub:" + resolved.location
        location = Path(cached).parent
    h = hashlib.sha256()
    for f in sorted(p for p in location.iterdir() if p.is_file()):
        if f.suffix not in (".json", ".safetensors", ".bin", ".model", ".txt"):
            continue
        size = f.stat().st_size
        h.update(f"{f.name}:{size}".encode())
        with open(f, "rb") as fh:
            h.update(fh.read(1 << 20))
            if size > 2 << 20:
                fh.seek(-(1 << 20), 2)
                h.update(fh.read())
    return h.hexdigest()[:12]




def refuse_hub_offline(resolved: Resolved, what: str, install_hint: str) -> None:
    """With HF_HUB_OFFLINE/TRANSFORMERS_OFFLINE set, an uncached hub id is absent now, not after network timeouts."""
    if resolved.origin == "hub" and offline():
        raise ScorerUnavailable(f"{what}: weights not installed locally and the hub is offline ({install_hint})")
