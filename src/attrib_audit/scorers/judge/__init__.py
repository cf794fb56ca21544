"""The LLM-judge family: prompted judges as scorers (`judge`: graded SUPPORT in [0,1]; `judge-label`: LABEL + CONF),
on a local GGUF (llama.cpp) or an OpenAI-compatible server, with a request cache that commits every reply."""
from __future__ import annotations

import inspect
from typing import Any

from attrib_audit.scorers.base import Scorer, ScorerSpec, register, resolver_check
from attrib_audit.scorers.judge.models import resolve_judge
from attrib_audit.scorers.judge.scorer import build_judge

JUDGE_SCORERS = ("judge", "judge-label")
JUDGE_INSTALL = "attrib-audit models install judge   (or a server: --judge-url URL --judge-model NAME)"


def _judge(kind: str, name: str):
    def build(**options: Any) -> Scorer:
        return build_judge(kind, name, **options)
    return build


def _judge_options() -> tuple[str, ...]:
    """build_judge's keyword options; the judge runs on its backend, so it takes no `device`."""
    return tuple(p.name for p in inspect.signature(build_judge).parameters.values() if p.kind is p.KEYWORD_ONLY)


register(ScorerSpec(name="judge", factory=_judge("graded", "judge"),
                    description="LLM judge, graded SUPPORT in [0,1] (local GGUF or server)",
                    family="llm-judge", check=lambda: resolver_check(resolve_judge), install=JUDGE_INSTALL,
                    options=_judge_options))
register(ScorerSpec(name="judge-label", factory=_judge("label", "judge-label"),
                    description="LLM judge, LABEL attributable|not_attributable + CONF", family="llm-judge",
                    check=lambda: resolver_check(resolve_judge), install=JUDGE_INSTALL, options=_judge_options))
