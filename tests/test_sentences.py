"""The sentence splitter gives the splits of its first (quadratic) version, now in linear time."""
from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from attrib_audit.text.sentences import _ABBREV, _BOUNDARY, split_sentences

# the boundary as first written (a lookbehind), the reference's; the splitter's _BOUNDARY finds the same spans
FIRST_BOUNDARY = re.compile(r"(?<=[.!?…])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9À-Ý])|\n\s*\n|\n(?=\s*(?:[-*•]|\d+[.)])\s)")


def reference_split(text: str) -> list[str]:
    """The splitter as first written (it re-reads the whole growing sentence at every skipped boundary), with
    closing quotes and brackets kept with their sentence."""
    out: list[str] = []
    start = 0
    for m in FIRST_BOUNDARY.finditer(text):
        piece = text[start:m.start()].rstrip()
        last = re.search(r"(\w+(?:\.\w+)*)\W*$", piece)
        word = last.group(1).lower() if last else ""
        if piece.endswith(".") and (word in _ABBREV or (len(word) == 1 and word.isalpha())) and "\n" not in m.group(0):
            continue
        closers = re.match(r"[\"')\]]*", m.group(0)).group(0)  # a closing quote or bracket stays with it
        if (piece + closers).strip():
            out.append((piece + closers).strip())
        start = m.end()
    tail = text[start:].strip()
    if tail:
        out.append(tail)
    return out


# the pieces the rules look at: abbreviations, initials, dotted words, every boundary character, quotes,
# list markers, characters outside ASCII (× is in the capital range but no word character; İ lowers to two)
TOKENS = ["Dr", "dr", "e.g", "i.e", "St", "Sept", "Fig", "al", "A", "x", "J", "Smith", "word", "a.b.c", "1", "12",
          "×", "İ", "É", "_", ".", "..", "!", "?", "…", "\"", "'", "(", ")", "[", "]", " ", "  ", "\n", "\n\n",
          " \n ", "\t", "- ", "* ", "• ", "1. ", "2) ", "ß"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(TOKENS), max_size=60))
def test_same_splits_as_the_first_version(tokens: list[str]) -> None:
    text = "".join(tokens)
    assert split_sentences(text) == reference_split(text)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("Dd. rE.gAx×İ\n!?…\"')(-1_")), max_size=80))
def test_same_splits_on_random_characters(text: str) -> None:
    assert split_sentences(text) == reference_split(text)


def test_known_splits() -> None:
    assert split_sentences("Dr. Smith went home. He said e.g. Hello. J. R. R. Tolkien wrote it.\n\nNew para") == [
        "Dr. Smith went home.", "He said e.g. Hello.", "J. R. R. Tolkien wrote it.", "New para"]
    assert split_sentences("Dr. Smith " * 3) == ["Dr. Smith Dr. Smith Dr. Smith"]
    # an abbreviation before a blank line still ends the paragraph
    assert split_sentences("See Dr.\n\nNext") == ["See Dr.", "Next"]


def test_closing_quotes_and_brackets_stay_with_their_sentence() -> None:
    """The quote after `mat.` used to be dropped: neither sentence held it, so a chunk lost a character."""
    assert split_sentences('He said "The cat sat on the mat." Then he left.') == [
        'He said "The cat sat on the mat."', "Then he left."]
    assert split_sentences("(He left.) She stayed. It was 'odd.'] Next") == [
        "(He left.)", "She stayed.", "It was 'odd.']", "Next"]
    assert split_sentences('See (Dr.) Smith. Done."\n\nNext') == ["See (Dr.) Smith.", 'Done."', "Next"]
    text = 'A "b." C (d.) E [f!] G \'h?\' I'
    assert "".join(split_sentences(text)).replace(" ", "") == text.replace(" ", "")  # no character lost


def test_is_word_is_re_word_class_on_every_code_point():
    """The splitter tests a word character with str.isalnum; that must be what re's \\w matches, everywhere."""
    from attrib_audit.text.sentences import _is_word

    word = re.compile(r"\w")
    differ = [c for c in map(chr, range(0x110000)) if _is_word(c) != (word.match(c) is not None)]
    assert differ == []


def boundary_spans(text: str) -> list[tuple[int, int]]:
    return [m.span(m.lastindex or 0) for m in _BOUNDARY.finditer(text)]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(TOKENS), max_size=60))
def test_boundaries_are_the_first_versions(tokens: list[str]) -> None:
    """The literal-first boundary regex finds exactly the lookbehind form's spans."""
    text = "".join(tokens)
    assert boundary_spans(text) == [m.span() for m in FIRST_BOUNDARY.finditer(text)]


def test_boundaries_on_known_texts() -> None:
    text = 'He left. "Then" x.) A\n\n  B\n- item! Next? 1 … É\n2) two'
    assert boundary_spans(text) == [m.span() for m in FIRST_BOUNDARY.finditer(text)]
    assert len(boundary_spans(text)) == 8
