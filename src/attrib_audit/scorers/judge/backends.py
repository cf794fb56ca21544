"""Where judge completions come from: a local GGUF through llama-cpp-python, or an OpenAI-compatible server.

Both decode greedily (temperature 0) with a fixed seed and a small token cap, and
return the answer text; a transport failure raises JudgeBackendError (it is not an
answer, so it is never recorded as a judgement), while a reply whose body is not a
chat completion comes back as `malformed` and is counted as a parse failure.
"""
from __future__ import annotations

import hashlib
import json
import os
import random
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attrib_audit.errors import BackendError
from attrib_audit.files.hashing import cached_sha256
from attrib_audit.scorers.base import ScorerLoadError, ScorerUnavailable
from attrib_audit.scorers.judge.http import OPENER, basic_header, public_url, redact, scrub, split_url, warn_plain_http


class JudgeBackendError(BackendError):
    """The judge could not be reached, refused, redirected or kept failing; finished requests are cached."""


@dataclass(frozen=True)
class Decoding:
    max_tokens: int = 20
    temperature: float = 0.0
    seed: int = 0
    grammar: str | None = None  # GBNF the answer must follow (llama.cpp in-process or server); None: free text

    def tag(self) -> str:
        g = f"-gbnf{hashlib.sha256(self.grammar.encode()).hexdigest()[:8]}" if self.grammar else ""
        return f"t{self.temperature:g}-max{self.max_tokens}-seed{self.seed}{g}"


@dataclass(frozen=True)
class Reply:
    text: str  # the answer (or the raw body when malformed)
    malformed: str | None = None  # why the reply is not a chat completion


def file_fingerprint(path: str | Path) -> str:
    """sha256 (16 hex) of the whole GGUF, cached per path, mtime and size so a rerun does not rehash 1 GB."""
    return cached_sha256(path)[:16]


def usable_cores() -> int:
    """Cores this process may run on: a container or taskset can allow fewer than os.cpu_count() reports."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def choose_threads() -> tuple[int, int]:
    """(decode threads, prefill threads) for this machine as it is now.

    Prefill runs large batches and uses every usable core. Decoding syncs its threads once per
    layer per token, so a thread that has to wait for a busy core stalls the others: it gets only
    the cores the 1-minute load average leaves free (at least one). Measured on 2 shared cores at
    load ~10, 2 decode threads ran at 0.5 token/s against 6 token/s for one.
    """
    cores = usable_cores()
    try:
        busy = os.getloadavg()[0]
    except OSError:  # not available on this platform
        busy = 0.0
    return max(1, min(cores, round(cores - busy))), cores


class LlamaCppBackend:
    """A GGUF loaded in-process; the chat template is the one stored in the GGUF's metadata.

    Prefix cache: the tokens every prompt of a judge shares (the chat template's opening and the
    system line: the common prefix of two probe prompts that differ only in the user message) are
    evaluated once on their own and their KV entries kept; each prompt then evaluates only what follows.
    Reuse never reaches further (llama-cpp-python by itself would reuse whatever a prompt shares with
    the one before, e.g. a question and evidence): the computation of a pair's answer then does not
    depend on which pair came before it, so the order of a run (engine, Ray, a resumed cache) cannot
    change an answer. `prefix_cache=False` resets the context before each prompt (the full prefill).
    Threads: llama.cpp defaults to half the CPUs for decoding and all for prefill; without an explicit
    `n_threads` the judge picks them from the machine's cores and load (`choose_threads`). n_batch 512
    takes a whole prompt at the default budgets in one batch.
    """

    concurrency = 1

    def __init__(self, model_path: str, decoding: Decoding, *, n_ctx: int = 2048, n_threads: int | None = None,
                 n_batch: int = 512, prefix_cache: bool = True) -> None:
        try:
            import llama_cpp
        except ImportError:
            raise ScorerUnavailable("judge: llama-cpp-python is not installed "
                                    "(pip install 'attrib-audit[judge]')") from None
        self._llama_cpp = llama_cpp
        self.model_path = str(model_path)
        self.decoding = decoding
        self.n_ctx = n_ctx
        self.n_threads, self.n_threads_batch = (n_threads, n_threads) if n_threads else choose_threads()
        self.n_batch = min(n_batch, n_ctx)
        self.prefix_cache = prefix_cache
        self._llm = None
        self._prefix: tuple[str, list[int]] | None = None  # (what precedes the last message, its shared tokens)
        self._lock = threading.Lock()
        self.signature = (f"llama.cpp-{llama_cpp.__version__}:{Path(model_path).name}:{file_fingerprint(model_path)}"
                          f":ctx{n_ctx}")

    def _model(self):
        if self._llm is None:
            try:
                self._llm = self._llama_cpp.Llama(model_path=self.model_path, n_ctx=self.n_ctx,
                                                  n_threads=self.n_threads,
                                                  n_threads_batch=self.n_threads_batch, n_batch=self.n_batch,
                                                  seed=self.decoding.seed, verbose=False)
            except Exception as exc:  # noqa: BLE001 - a GGUF that is here but does not load is an error
                first = str(exc).splitlines()[0] if str(exc) else ""
                raise ScorerLoadError(f"judge: the GGUF {self.model_path!r} is present but does not load "
                                      f"({type(exc).__name__}: {first})") from None
        return self._llm

    def complete(self, messages: list[dict[str, str]]) -> Reply:
        with self._lock:
            llm = self._model()
            if self.prefix_cache:
                self._start_from_prefix(llm, messages)
            else:
                llm.reset()
            try:
                grammar = (self._llama_cpp.LlamaGrammar.from_string(self.decoding.grammar, verbose=False)
                           if self.decoding.grammar else None)
                out = llm.create_chat_completion(messages=messages, temperature=self.decoding.temperature, top_k=1,
                                                 max_tokens=self.decoding.max_tokens, seed=self.decoding.seed,
                                                 grammar=grammar)
            except ValueError as exc:  # the prompt does not fit the context window
                return Reply("", f"prompt rejected by llama.cpp: {exc}")
        return Reply(out["choices"][0]["message"].get("content") or "")

    def _start_from_prefix(self, llm, messages: list[dict[str, str]]) -> None:
        """Leave exactly the fixed shared prefix in the context, evaluated on its own, so generate() goes on from it."""
        key = json.dumps(messages[:-1], sort_keys=True)
        known = self._prefix
        new = known is None or known[0] != key
        if known is None or new:
            a, b = (_prompt_tokens(llm, messages[:-1] + [{**messages[-1], "content": x}]) for x in ("a", "b"))
            n = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            known = self._prefix = (key, a[:n])
        prefix = known[1]
        # a new prefix is evaluated afresh even if the context starts with its tokens: they were evaluated
        # together with what followed them then, and the prefix must always be evaluated on its own
        if not new and prefix and llm.n_tokens >= len(prefix) and list(llm.input_ids[:len(prefix)]) == prefix:
            llm.n_tokens = len(prefix)  # keep the prefix's KV entries; generate() drops the rest
        else:
            llm.reset()
            if prefix:
                llm.eval(prefix)


class _Captured(Exception):
    def __init__(self, tokens: list[int]) -> None:
        self.tokens = tokens


def _prompt_tokens(llm, messages: list[dict[str, str]]) -> list[int]:
    """The tokens llama-cpp-python's chat template makes of `messages`, caught before anything is evaluated."""
    def capture(tokens, *_a, **_k):
        raise _Captured(list(tokens))

    llm.generate = capture
    try:
        llm.create_chat_completion(messages=messages, max_tokens=1)
    except _Captured as got:
        return got.tokens
    finally:
        del llm.generate
    raise RuntimeError("llama-cpp-python did not tokenize the prompt through Llama.generate")


class OpenAIChatBackend:
    """POST /chat/completions on any OpenAI-compatible server (vLLM, llama.cpp server, Ollama, hosted APIs)."""

    def __init__(self, url: str, model: str, decoding: Decoding, *, api_key_env: str = "ATTRIB_AUDIT_JUDGE_API_KEY",
                 concurrency: int = 4, timeout: float = 60.0, retries: int = 4, backoff: float = 0.5) -> None:
        if not model:
            raise ScorerUnavailable("judge: --judge-url needs --judge-model (the model name the server expects)")
        if concurrency < 1 or retries < 0 or timeout <= 0:
            raise ValueError("judge: concurrency >= 1, retries >= 0 and timeout > 0 are required")
        request_url, basic, self._secrets = split_url(url)
        base, _, query = request_url.partition("?")
        base = base.rstrip("/")
        base = base if base.endswith("/chat/completions") else f"{base}/chat/completions"
        self._request_url = base + (f"?{query}" if query else "")
        self.endpoint = public_url(self._request_url)  # what may be recorded, hashed and printed
        self.model = model
        self.decoding = decoding
        self.api_key = os.environ.get(api_key_env) if api_key_env else None
        self._auth = f"Bearer {self.api_key}" if self.api_key else (basic_header(basic) if basic else None)
        self._secrets += [s for s in (self.api_key, self._auth) if s]
        if self._auth:
            warn_plain_http(self._request_url)
        self.concurrency = int(concurrency)
        self.timeout = float(timeout)
        self.retries = int(retries)
        self.backoff = float(backoff)
        self.signature = f"openai-chat:{self.endpoint}:{model}"

    def _payload(self, messages: list[dict[str, str]]) -> bytes:
        d = self.decoding
        body = {"model": self.model, "messages": messages, "temperature": d.temperature, "max_tokens": d.max_tokens,
                "seed": d.seed, "stream": False}
        if d.grammar:  # a llama.cpp server extension; other servers may reject or ignore it
            body["grammar"] = d.grammar
        return json.dumps(body).encode()

    def _post(self, body: bytes) -> tuple[int, str, dict[str, str]]:
        headers = {"Content-Type": "application/json"}
        if self._auth:
            headers["Authorization"] = self._auth
        req = urllib.request.Request(self._request_url, data=body, headers=headers, method="POST")
        try:
            with OPENER.open(req, timeout=self.timeout) as resp:
                return resp.status, resp.read().decode("utf-8", "replace"), dict(resp.headers)
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode("utf-8", "replace"), dict(exc.headers or {})

    def _wait(self, attempt: int, headers: dict[str, str]) -> float:
        retry_after = headers.get("Retry-After") or headers.get("retry-after")
        if retry_after and retry_after.replace(".", "", 1).isdigit():
            return min(float(retry_after), 60.0)
        return self.backoff * (2 ** attempt) * (1.0 + 0.25 * random.random())

    def complete(self, messages: list[dict[str, str]]) -> Reply:
        body = self._payload(messages)
        last = ""
        for attempt in range(self.retries + 1):
            headers: dict[str, str] = {}
            try:
                status, text, headers = self._post(body)
            except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as exc:
                last = f"{type(exc).__name__}: {scrub(str(getattr(exc, 'reason', exc)), self._secrets)}"
            else:
                if status == 200:  # a reply is stored and reported: a key the server echoes must not be
                    reply = _chat_reply(text)
                    return Reply(redact(reply.text, self._secrets), reply.malformed)
                if 300 <= status < 400:
                    # the Location header is the server's: it may carry the key anywhere, not only in a known query
                    # parameter
                    target = scrub(public_url(headers.get("Location") or headers.get("location") or "?"),
                                   self._secrets)
                    raise JudgeBackendError(f"judge server {self.endpoint} answered HTTP {status} redirecting to "
                                            f"{target}; redirects are not followed (the key and the data would go "
                                            "there): pass the final URL as --judge-url")
                last = f"HTTP {status}: {scrub(text, self._secrets)}"
                if status != 429 and status < 500:
                    raise JudgeBackendError(f"judge server {self.endpoint} refused the request ({last})")
            if attempt < self.retries:
                time.sleep(self._wait(attempt, headers))
        raise JudgeBackendError(f"judge server {self.endpoint} failed after {self.retries + 1} attempts ({last}); "
                                "its finished replies are in the request cache")


def _chat_reply(body: str) -> Reply:
    try:
        data: Any = json.loads(body)
        content = data["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        return Reply(body[:2000], "response is not a chat completion")
    if not isinstance(content, str):
        return Reply(body[:2000], "chat completion has no text content")
    return Reply(content)
