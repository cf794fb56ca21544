"""Text room: offline tokenisation, sentence splitting, window chunking (no downloads), answer normalisation and
citation markers (`answers`), and the one reading of a text cell (`cells`)."""
from attrib_audit.text.sentences import split_sentences
from attrib_audit.text.tokenize import jaccard, token_set, tokens

__all__ = ["jaccard", "split_sentences", "token_set", "tokens"]
