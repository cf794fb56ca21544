"""Chunking long evidence into windows a model can read.

`sentence_windows`: runs of consecutive sentences whose summed cost (model tokens) fits a budget;
a single sentence over the budget is split at word boundaries, so chunking never drops text (our
NLI `mode=chunk` and the `-chunk` encoder scorers), cut by our fast rule splitter. `minicheck_chunks` and
`alignscore_chunks` are the official chunkers of those checkers, rule for rule, with the authors' splitter
(NLTK's Punkt, `text.punkt`), so their chunks are the authors' chunks.
"""
from __future__ import annotations

from typing import Callable, Iterable, Sequence

from attrib_audit.text.punkt import punkt_sentences
from attrib_audit.text.sentences import split_sentences

Cost = Callable[[list[str]], Iterable[int]]


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


def newline_sentences(text: str) -> list[str]:
    """MiniCheck's `sent_tokenize_with_newlines`: each newline-separated block split into sentences by
    `nltk.sent_tokenize` (Punkt), with a "\\n" unit between blocks (blank lines give consecutive "\\n" units),
    so chunks keep the line breaks."""
    units: list[str] = []
    for block in text.split("\n"):
        units.extend(punkt_sentences(block))
        units.append("\n")
    return units[:-1]


def greedy_chunks(units: Sequence[str], costs: Sequence[int], size: int) -> list[str]:
    """MiniCheck's packing: add whole units while the running cost stays within `size`, then start a new chunk.

    A unit is never split, so one longer than `size` becomes a chunk of its own (over size: the model's
    window then cuts it, and the cut is counted). Chunks are joined with spaces, " \\n " becomes "\\n", and
    empty chunks are dropped; an empty text gives one empty chunk, so every pair is scored once.
    """
    chunks: list[list[str]] = []
    current: list[str] = []
    total = 0
    for unit, cost in zip(units, costs):
        if total + cost > size:
            chunks.append(current)
            current, total = [unit], int(cost)
        else:
            current.append(unit)
            total += int(cost)
    chunks.append(current)
    out = [" ".join(c).replace(" \n ", "\n").strip() for c in chunks]
    return [c for c in out if c] or [""]


def minicheck_chunks(text: str, size: int, cost: Cost | None = None) -> list[str]:
    """MiniCheck's chunks of a document: newline blocks and sentences packed greedily up to `size`
    words (`cost=None`, Flan-T5: 500) or model tokens (`cost` = the tokenizer's count, encoders: 400)."""
    units = newline_sentences(text) or [""]
    costs = word_count(units) if cost is None else list(cost(units))
    return greedy_chunks(units, costs, size)


def alignscore_chunks(text: str, words: int = 350) -> list[str]:
    """AlignScore's chunks: n = words // 350 + 1 chunks of an equal number of consecutive Punkt sentences
    (len(sentences) // n, at least 1), joined with spaces; the last chunk takes the remainder."""
    sentences = punkt_sentences(text) or [""]
    n_chunk = len(text.strip().split()) // words + 1
    per = max(len(sentences) // n_chunk, 1)
    return [" ".join(sentences[i:i + per]) for i in range(0, len(sentences), per)]
