"""Sentence-aligned windows for long evidence (MiniCheck-style chunk-and-max).

A window is a run of consecutive sentences whose summed cost fits a budget; the cost
is whatever the caller measures (model tokens for NLI windows, words for MiniCheck).
A single sentence over the budget is split at word boundaries rather than cut, so
chunking itself never drops text.
"""
from __future__ import annotations

from typing import Callable, Sequence

from attrib_audit.text.sentences import split_sentences

Cost = Callable[[list[str]], Sequence[int]]


def pack(costs: Sequence[int], budget: int) -> list[tuple[int, int]]:
    """Greedy spans [start, end) of consecutive units whose cost sum stays within budget.

    A unit that alone exceeds the budget gets a span of its own.
    """
    if budget < 1:
        raise ValueError(f"window budget must be >= 1, got {budget}")
    spans: list[tuple[int, int]] = []
    start, total = 0, 0
    for i, c in enumerate(costs):
        if i > start and total + c > budget:
            spans.append((start, i))
            start, total = i, 0
        total += c
    if len(costs) > start:
        spans.append((start, len(costs)))
    return spans


def sentence_windows(text: str, budget: int, cost: Cost) -> list[str]:
    """Windows of whole sentences with cost <= budget (an over-long sentence is split by words).

    Empty or whitespace-only text gives one empty window, so every pair is scored once.
    """
    units: list[str] = []
    unit_costs: list[int] = []
    sentences = split_sentences(text)
    for sentence, c in zip(sentences, cost(sentences) if sentences else ()):
        if c <= budget:
            units.append(sentence)
            unit_costs.append(int(c))
            continue
        words = sentence.split()
        word_costs = list(cost(words))
        for a, b in pack(word_costs, budget):
            units.append(" ".join(words[a:b]))
            unit_costs.append(int(sum(word_costs[a:b])))
    if not units:
        return [""]
    return [" ".join(units[a:b]) for a, b in pack(unit_costs, budget)]


def word_count(texts: list[str]) -> list[int]:
    return [len(t.split()) for t in texts]


def word_windows(text: str, max_words: int = 400) -> list[str]:
    """MiniCheck's chunking: ~max_words-word windows on sentence boundaries."""
    return sentence_windows(text, max_words, word_count)
