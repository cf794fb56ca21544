"""Offline-first model resolution: explicit path > environment variable > PyPI package > hub id."""
from __future__ import annotations

import os
import socket
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, TypeVar
from urllib.parse import urlsplit

from attrib_audit.scorers.base import ScorerLoadError, ScorerUnavailable

T = TypeVar("T")


@dataclass(frozen=True)
class Resolved:
    location: str  # a local directory/file, or a hub id
    origin: str  # "path", "env:VAR", "package:NAME", "hub-cache" or "hub"

    @property
    def is_local(self) -> bool:
        return self.origin != "hub"


def _hub_cached(hub_id: str) -> bool:
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # pragma: no cover - huggingface_hub ships with transformers
        return False
    return isinstance(try_to_load_from_cache(hub_id, "config.json"), str)


def resolve_model(
    *,
    explicit: str | None,
    env_var: str,
    package: Callable[[], str | None] | None,
    hub_id: str | None,
    what: str,
    install_hint: str,
) -> Resolved:
    """Find a model's weights in the documented order; the hub id is last and only used online."""
    if explicit:
        if not Path(explicit).exists():
            if "/" in explicit and not explicit.startswith((".", "/")):
                return Resolved(explicit, "hub-cache" if _hub_cached(explicit) else "hub")
            raise ScorerUnavailable(f"{what}: path {explicit!r} does not exist")
        return Resolved(str(explicit), "path")
    env = os.environ.get(env_var)
    if env:
        if not Path(env).exists():
            raise ScorerUnavailable(f"{what}: ${env_var}={env!r} does not exist")
        return Resolved(env, f"env:{env_var}")
    if package is not None:
        found = package()
        if found:
            return Resolved(found, "package")
    if hub_id:
        return Resolved(hub_id, "hub-cache" if _hub_cached(hub_id) else "hub")
    raise ScorerUnavailable(f"{what}: weights not installed ({install_hint})")


def offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0") or os.environ.get("TRANSFORMERS_OFFLINE",
                                                                                   "") not in ("", "0")


def _proxy_for(url: str) -> str | None:
    """The proxy the hub libraries would use for `url` (HTTPS_PROXY and friends), unless NO_PROXY exempts its host."""
    import urllib.request

    host = urlsplit(url).hostname or ""
    if urllib.request.proxy_bypass(host):
        return None
    return urllib.request.getproxies().get(urlsplit(url).scheme or "https")


def hub_reachable(timeout: float = 2.0) -> bool:
    """Whether the hub (HF_ENDPOINT, or its proxy) accepts a TCP connection within `timeout` seconds.

    Asked before a download so that a machine without network says so at once instead of spending the hub client's
    retries; False when the environment says offline (HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE).

    Args:
        timeout: seconds for name lookup and connection together.

    Returns:
        True when a connection was made.
    """
    if offline():
        return False
    url = os.environ.get("HF_ENDPOINT") or "https://huggingface.co"
    target = urlsplit(_proxy_for(url) or url)
    host, port = target.hostname, target.port or (443 if target.scheme == "https" else 80)
    if not host:
        return False
    ok: list[bool] = []

    def connect() -> None:
        try:
            with socket.create_connection((host, port), timeout=timeout):
                ok.append(True)
        except OSError:
            pass

    worker = threading.Thread(target=connect, daemon=True)  # a stuck name lookup must not hold the caller
    worker.start()
    worker.join(timeout)
    return bool(ok)


def quiet_model_loading() -> None:
    """Silence transformers' weight-loading bars when stderr is not a terminal (logs, CI, pipes)."""
    import sys

    if not sys.stderr.isatty():
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()


def load_or_unavailable(resolved: Resolved, loader: Callable[[str], T], *, what: str, install_hint: str) -> T:
    """Run a loader. A hub id that is not on this machine is absent (ScorerUnavailable: the audit skips
    the scorer and says so); weights that are here but do not load (corrupt, truncated, wrong layout) are
    a ScorerLoadError: the audit stops, since skipping would hide a broken install."""
    if resolved.origin == "hub" and not hub_reachable():
        why = "the hub is offline" if offline() else "the hub cannot be reached from this machine"
        raise ScorerUnavailable(f"{what}: weights not installed locally and {why} ({install_hint})")
    quiet_model_loading()
    try:
        return loader(resolved.location)
    except (ScorerUnavailable, ScorerLoadError):
        raise
    except Exception as exc:  # noqa: BLE001 - loaders raise many types; each becomes one line below
        if resolved.origin == "hub":
            raise ScorerUnavailable(
                f"{what}: weights not installed locally and {resolved.location!r} could not be fetched "
                f"({type(exc).__name__}); {install_hint}") from None
        first = next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), "")[:300]
        raise ScorerLoadError(f"{what}: weights at {resolved.location!r} ({resolved.origin}) are present but do not "
                              f"load ({type(exc).__name__}: {first}); reinstall them or point "
                              f"--model-path at a working copy") from None
