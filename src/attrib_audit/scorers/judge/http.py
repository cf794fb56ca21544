"""What the judge client sends where: credentials never leave the request, redirects are never followed.

A `--judge-url` may carry credentials (`user:pw@host`, `?api-key=...`). They are used for the
request only; `public_url` is the form that may enter a signature, a cache key, results.json, a
report or a message. A redirect is refused (urllib would re-send the bearer key to the target and
turn the POST into a GET whose reply would be cached as a judgement).
"""
from __future__ import annotations

import base64
import ipaddress
import urllib.request
import warnings
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from attrib_audit.errors import InputError

# query parameters that carry a secret (compared lower-case, with - and _ removed)
SECRET_PARAMS = frozenset({"apikey", "key", "token", "accesstoken", "auth", "authorization", "password", "pass",
                           "pw", "secret", "sig", "signature", "code", "xapikey", "subscriptionkey"})
REDACTED = "***"
_warned: set[str] = set()


class JudgeURLError(InputError):
    """--judge-url cannot be used as given."""


def _secret(name: str) -> bool:
    return name.lower().replace("-", "").replace("_", "") in SECRET_PARAMS


def split_url(url: str) -> tuple[str, str | None, list[str]]:
    """(URL to request without user:pw@, the Basic credentials 'user:pw' or None, the secret values inside it)."""
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError as exc:
        raise JudgeURLError(f"--judge-url {public_url(url)!r} is not a valid URL ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise JudgeURLError(f"--judge-url {public_url(url)!r} must be an http:// or https:// URL with a host")
    secrets = [v for k, v in parse_qsl(parts.query, keep_blank_values=True) if _secret(k) and v]
    basic = None
    if parts.username is not None or parts.password is not None:
        basic = f"{parts.username or ''}:{parts.password or ''}"
        secrets += [s for s in (parts.password, parts.username) if s]
    return urlunsplit((parts.scheme, _authority(parts), parts.path, parts.query, "")), basic, secrets


def _authority(parts) -> str:
    """host[:port] without user:pw@ (raises ValueError on a malformed port)."""
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    return host + (f":{parts.port}" if parts.port is not None else "")


def public_url(url: str) -> str:
    """The URL with user:pw@ and secret query parameters removed: safe to record, hash and print."""
    parts = urlsplit(str(url).strip())
    try:
        host = _authority(parts)
    except ValueError:  # malformed port: keep what follows the last '@' of the authority
        host = parts.netloc.rsplit("@", 1)[-1]
    query = urlencode([(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if not _secret(k)])
    return urlunsplit((parts.scheme, host, parts.path, query, ""))


def public_options(options: dict) -> dict:
    """Scorer options as results.json records them: every `url` in its public form."""
    return {name: {k: public_url(v) if k == "url" and isinstance(v, str) else v for k, v in opts.items()}
            if isinstance(opts, dict) else opts for name, opts in options.items()}


def basic_header(credentials: str) -> str:
    return "Basic " + base64.b64encode(credentials.encode("utf-8")).decode("ascii")


def redact(text: str, secrets: list[str]) -> str:
    """`text` with every secret replaced by ***, longest first (a key may contain a shorter one)."""
    for s in sorted((s for s in secrets if s), key=len, reverse=True):
        text = text.replace(s, REDACTED)
    return text


def scrub(text: str, secrets: list[str], limit: int = 160) -> str:
    """A server reply fit for an error message: secrets replaced, whitespace collapsed, cut to `limit`."""
    flat = " ".join(redact(text, secrets).split())
    return flat if len(flat) <= limit else flat[:limit] + f"… ({len(flat)} characters)"


def loopback(host: str | None) -> bool:
    if not host:
        return False
    if host.lower() == "localhost" or host.lower().endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def warn_plain_http(url: str) -> None:
    """Once per endpoint: a key sent over plain http to another machine can be read on the way."""
    parts = urlsplit(url)
    if parts.scheme == "http" and not loopback(parts.hostname):
        shown = public_url(url)
        if shown not in _warned:
            _warned.add(shown)
            warnings.warn(f"judge: the API key is sent over plain http to {parts.hostname}; use https:// for a "
                          "server on another machine", RuntimeWarning, stacklevel=3)


class _RefuseRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: D102 - urllib hook
        return None  # urllib then raises HTTPError with the 3xx status and the Location header


OPENER = urllib.request.build_opener(_RefuseRedirects)
