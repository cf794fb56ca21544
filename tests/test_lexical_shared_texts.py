"""LexicalScorer builds each distinct text's token set once per batch; scores stay those of `jaccard`."""
import numpy as np

from attrib_audit.scorers.lexical import LexicalScorer
from attrib_audit.text.tokenize import jaccard


def test_repeated_texts_and_mixed_scripts_score_as_jaccard():
    ev = ["Paris is the capital of France.", "Köln liegt am Rhein, Paris nicht.", ""]
    claims = ["Paris is in France", "paris CAPITAL", "Köln is on the Rhein", "Paris", "", "Rhein"]
    pairs = [(c, e) for c in claims for e in ev] * 2  # every text many times, ASCII and not with the same partner
    out = LexicalScorer().score([c for c, _ in pairs], [e for _, e in pairs]).scores
    np.testing.assert_array_equal(out, [jaccard(c, e) for c, e in pairs])
    assert out[0] == jaccard("Paris is in France", ev[0]) > 0
