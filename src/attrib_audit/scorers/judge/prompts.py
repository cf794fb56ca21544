"""Judge prompts and the character budgets inputs are cut to before prompting.

The prompt text and its version enter the scorer signature, so editing a prompt
invalidates cached judgements instead of mixing old and new ones.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

SYSTEM = ("You are a careful annotator who checks whether a claim is supported by the evidence given. "
          "Use only the evidence, not your own knowledge. Answer in the exact format asked for, nothing else.")

GRADED = """{question_block}Evidence:
{evidence}

Claim:
{claim}

How well does the evidence support the claim? 1 means every part of the claim is stated or directly implied by the \
evidence, 0 means the evidence does not support it or contradicts it.
Reply with one line only: SUPPORT: <a number between 0 and 1>"""

LABEL = """{question_block}Evidence:
{evidence}

Claim:
{claim}

Is the claim attributable to the evidence, i.e. is every part of it stated or directly implied by the evidence?
Reply with exactly two lines:
LABEL: attributable or not_attributable
CONF: <your confidence in that label, a number between 0 and 1>"""


@dataclass(frozen=True)
class Prompt:
    kind: str  # "graded" or "label"
    version: int
    system: str
    template: str

    @property
    def digest(self) -> str:
        return hashlib.sha256(f"{self.system}\x00{self.template}".encode()).hexdigest()[:12]


PROMPTS = {"graded": Prompt("graded", 1, SYSTEM, GRADED), "label": Prompt("label", 1, SYSTEM, LABEL)}

_NUMBER = 'num ::= "0" ("." [0-9] [0-9]?)? | "1" (".0" "0"?)?\n'
# GBNF grammars (llama.cpp) that force each prompt's answer format: a small local model that
# would otherwise ramble (SmolLM2-135M never writes `SUPPORT:` unprompted) gives a parseable number.
GRAMMARS = {"graded": 'root ::= "SUPPORT: " num\n' + _NUMBER,
            "label": 'root ::= "LABEL: " ("attributable" | "not_attributable") "\\nCONF: " num\n' + _NUMBER}


@dataclass(frozen=True)
class Budgets:
    """Characters kept per field; what is cut is counted, never silent."""

    evidence: int = 1500
    claim: int = 600
    question: int = 300

    def __post_init__(self) -> None:
        for name in ("evidence", "claim", "question"):
            if getattr(self, name) < 1:
                raise ValueError(f"judge budget for {name} must be a positive number of characters")

    def tag(self) -> str:
        return f"e{self.evidence}c{self.claim}q{self.question}"


@dataclass(frozen=True)
class Rendered:
    messages: list[dict[str, str]]
    chars_in: int  # characters of question + claim + evidence before cutting
    chars_cut: int


def cut(text: str, budget: int) -> tuple[str, int]:
    """Keep the first `budget` characters; returns (kept, characters cut)."""
    return (text, 0) if len(text) <= budget else (text[:budget], len(text) - budget)


def render(prompt: Prompt, claim: str, evidence: str, question: str | None, budgets: Budgets) -> Rendered:
    c, cut_c = cut(claim, budgets.claim)
    e, cut_e = cut(evidence, budgets.evidence)
    q, cut_q = cut(question, budgets.question) if question else ("", 0)
    block = f"Question:\n{q}\n\n" if q else ""
    user = prompt.template.format(question_block=block, evidence=e, claim=c)
    return Rendered([{"role": "system", "content": prompt.system}, {"role": "user", "content": user}],
                    len(claim) + len(evidence) + len(question or ""), cut_c + cut_e + cut_q)
