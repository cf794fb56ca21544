"""LLM judges as scorers: `judge` (graded SUPPORT) and `judge-label` (LABEL + CONF).

Failures (refusals, unparseable or malformed answers) are NaN with the reason and the
raw text; they are excluded from AUROC by the audit and counted per slice, never imputed.
For judges `truncated_tokens` / `input_tokens` count characters (the budgets are in characters).
"""
from __future__ import annotations

import json
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from typing import Any, Sequence

import numpy as np

from attrib_audit.files.paths import default_requests_path
from attrib_audit.scorers.base import ScoreBatch, Scorer
from attrib_audit.scorers.judge.backends import Decoding, JudgeBackendError, LlamaCppBackend, OpenAIChatBackend, Reply
from attrib_audit.scorers.judge.models import resolve_judge
from attrib_audit.scorers.judge.parse import Parsed, parse_label, parse_support
from attrib_audit.scorers.judge.prompts import GRAMMARS, PROMPTS, Budgets, Prompt, render
from attrib_audit.scorers.judge.requests_cache import RequestCache, request_key


class JudgeScorer(Scorer):
    """Prompts a backend once per pair; every reply is cached in SQLite as it arrives."""

    wants_questions = True  # the engine passes the question and keys its cache on it

    def __init__(self, name: str, prompt: Prompt, backend: Any, *, budgets: Budgets = Budgets(),
                 request_cache: RequestCache | None = None) -> None:
        self.name = name
        self.prompt = prompt
        self.backend = backend
        self.budgets = budgets
        self.requests = request_cache
        self.batch_size = max(8, 4 * getattr(backend, "concurrency", 1))
        self._parse = parse_support if prompt.kind == "graded" else parse_label

    @property
    def signature(self) -> str:
        p = self.prompt
        return (f"{self.name}:prompt-{p.kind}-v{p.version}-{p.digest}:{self.backend.signature}:"
                f"{self.backend.decoding.tag()}:{self.budgets.tag()}")

    def _reply(self, messages: list[dict[str, str]]) -> Reply:
        request = {"messages": messages, "decoding": self.backend.decoding.tag()}
        key = request_key(self.backend.signature, json.dumps(request, sort_keys=True))
        if self.requests is not None:
            hit = self.requests.get(key)
            if hit is not None:
                return hit
        reply = self.backend.complete(messages)
        if self.requests is not None:
            self.requests.put(key, self.backend.signature, request, reply)
        return reply

    def _replies(self, prompts: list[list[dict[str, str]]]) -> list[Reply]:
        width = getattr(self.backend, "concurrency", 1)
        if width <= 1 or len(prompts) <= 1:
            return [self._reply(m) for m in prompts]
        with ThreadPoolExecutor(max_workers=min(width, len(prompts)), thread_name_prefix="judge") as pool:
            futures = [pool.submit(self._reply, m) for m in prompts]
            done, pending = wait(futures, return_when=FIRST_EXCEPTION)
            for f in pending:
                f.cancel()
            for f in futures:
                exc = f.exception() if f in done else None
                if exc is not None:
                    raise exc
            return [f.result() for f in futures]

    def score(self, claims: Sequence[str], evidences: Sequence[str], *,
              questions: Sequence[str | None] | None = None) -> ScoreBatch:
        qs = list(questions) if questions is not None else [None] * len(claims)
        rendered = [render(self.prompt, c, e, q, self.budgets) for c, e, q in zip(claims, evidences, qs)]
        replies = self._replies([r.messages for r in rendered])
        parsed = [Parsed(None, f"{r.malformed}: {r.text[:200]!r}") if r.malformed else self._parse(r.text)
                  for r in replies]
        extras: dict[str, list[Any]] = {"raw": [r.text for r in replies], "clamped": [p.clamped for p in parsed]}
        if self.prompt.kind == "label":
            extras["label"] = [p.label for p in parsed]
        return ScoreBatch(scores=np.array([np.nan if p.value is None else p.value for p in parsed]),
                          truncated_tokens=np.array([r.chars_cut for r in rendered]),
                          input_tokens=np.array([r.chars_in for r in rendered]),
                          chunks=np.ones(len(rendered), dtype=np.int64),
                          failures=[p.failure for p in parsed], extras=extras)


def build_judge(kind: str, name: str, *, path: str | None = None, url: str | None = None, model: str | None = None,
                api_key_env: str = "ATTRIB_AUDIT_JUDGE_API_KEY", concurrency: int = 4, timeout: float = 60.0,
                retries: int = 4, backoff: float = 0.5, seed: int = 0, max_tokens: int = 20,
                evidence_chars: int = 1500, claim_chars: int = 600, question_chars: int = 300, n_ctx: int = 2048,
                n_threads: int | None = None, n_batch: int = 512, prefix_cache: bool = True,
                request_cache: str | None = "default", grammar: bool = False) -> JudgeScorer:
    """The registry factory: a server when `url` is given, else the local GGUF (explicit path, env, installed).

    `grammar` constrains decoding to the prompt's answer format (llama.cpp only).
    """
    decoding = Decoding(max_tokens=int(max_tokens), temperature=0.0, seed=int(seed),
                        grammar=GRAMMARS[kind] if _flag(grammar) else None)
    if url:
        backend: Any = OpenAIChatBackend(url, model or "", decoding, api_key_env=api_key_env,
                                         concurrency=int(concurrency),
                                         timeout=float(timeout), retries=int(retries), backoff=float(backoff))
    else:
        backend = LlamaCppBackend(resolve_judge(path).location, decoding, n_ctx=int(n_ctx),
                                  n_threads=int(n_threads) if n_threads else None, n_batch=int(n_batch),
                                  prefix_cache=bool(prefix_cache))
    cache = None
    if request_cache not in (None, "", "none", ":none:"):
        cache = RequestCache(default_requests_path() if request_cache == "default" else request_cache)
    budgets = Budgets(int(evidence_chars), int(claim_chars), int(question_chars))
    return JudgeScorer(name, PROMPTS[kind], backend, budgets=budgets, request_cache=cache)


def _flag(value: Any) -> bool:
    """A boolean option, also from `--scorer-opt judge.grammar=true` (a string)."""
    if isinstance(value, str):
        if value.lower() not in ("true", "false", "1", "0", "yes", "no"):
            raise ValueError(f"judge: grammar must be true or false, not {value!r}")
        return value.lower() in ("true", "1", "yes")
    return bool(value)


__all__ = ["JudgeBackendError", "JudgeScorer", "build_judge"]
