"""Answer-level metrics on ASQA-style data, as ASQA/ALCE compute them.

QA-EM is ASQA's `str_em`: a qa_pair counts when any of its aliases, normalised (lowercase,
no punctuation, no articles, single spaces), is a substring of the normalised answer; the
mean over qa_pairs is the example's score. ROUGE-L is rouge-score's summary-level F
(`rougeLsum`, Porter stemming, one sentence per line), the max over the long reference
answers. Citation markers are removed before both, as ALCE does.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Mapping

import numpy as np

from attrib_audit.probe.records import AsqaExample
from attrib_audit.text.answers import citation_indices, normalize_answer, strip_citations
from attrib_audit.text.sentences import split_sentences

METRICS = ("qa_em", "rouge_l", "citations")


def str_em(answer: str, example: AsqaExample) -> float:
    """Share of the example's qa_pairs with some alias inside the answer (both normalised)."""
    norm = normalize_answer(strip_citations(answer))
    hits = [any(normalize_answer(a) in norm for a in qa.short_answers) for qa in example.qa_pairs]
    return float(np.mean(hits))


@lru_cache(maxsize=1)
def _rouge():
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rougeLsum"], use_stemmer=True)


def _lines(text: str) -> str:
    return "\n".join(split_sentences(text))


def rouge_l(answer: str, references: tuple[str, ...] | list[str]) -> float:
    """Max over references of ROUGE-Lsum F; 0 for an empty answer."""
    pred = _lines(strip_citations(answer))
    scorer = _rouge()
    return max(scorer.score(_lines(ref), pred)["rougeLsum"].fmeasure for ref in references)


def answer_metrics(outputs: Mapping[str, str], examples: Mapping[str, AsqaExample], ids: list[str]) -> dict[str,
                                                                                                            np.ndarray]:
    """Per-example qa_em, rouge_l and citation count for the given ids (aligned with `ids`)."""
    return {
        "qa_em": np.array([str_em(outputs[i], examples[i]) for i in ids], dtype=np.float64),
        "rouge_l": np.array([rouge_l(outputs[i], examples[i].long_answers) for i in ids], dtype=np.float64),
        "citations": np.array([len(citation_indices(outputs[i])) for i in ids], dtype=np.float64),
    }
