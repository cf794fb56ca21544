"""Text room: offline tokenisation, sentence splitting and window chunking (no downloads)."""
from attrib_audit.text.tokenize import jaccard, token_set, tokens
from attrib_audit.text.sentences import split_sentences

__all__ = ["jaccard", "split_sentences", "token_set", "tokens"]
