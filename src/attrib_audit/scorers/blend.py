"""The fixed lexical+semantic blend: w_lex·Jaccard + w_sem·cosine (0.47 / 0.53 by default)."""
from __future__ import annotations

from typing import Mapping, Sequence

from attrib_audit.scorers.base import ScoreBatch, Scorer, ScorerSpec, register, resolver_check
from attrib_audit.scorers.embedding import MINILM_INSTALL, ST_LIBS, embedding_factory, local_identity, resolve_minilm
from attrib_audit.scorers.lexical import LexicalScorer


class BlendScorer(Scorer):
    name = "blend"
    batch_size = 64

    def __init__(self, lexical: Scorer, semantic: Scorer, *, w_lex: float = 0.47, w_sem: float = 0.53) -> None:
        self.lexical, self.semantic, self.w_lex, self.w_sem = lexical, semantic, float(w_lex), float(w_sem)
        self.window = semantic.window  # the semantic scorer's token window (the lexical side reads everything)

    @property
    def signature(self) -> str:
        return f"blend:{self.w_lex:g}*[{self.lexical.signature}]+{self.w_sem:g}*[{self.semantic.signature}]"

    @property
    def components(self) -> Mapping[str, Scorer]:
        """The engine scores these (through the score cache) and calls `compose`: a run with `minilm` beside
        `blend` encodes every text once."""
        return {"lexical": self.lexical, "semantic": self.semantic}

    def compose(self, parts: Mapping[str, ScoreBatch]) -> ScoreBatch:
        """w_lex·lexical + w_sem·semantic; truncation is the semantic side's (the lexical side reads everything)."""
        lex, sem = parts["lexical"], parts["semantic"]
        return ScoreBatch.plain(self.w_lex * lex.scores + self.w_sem * sem.scores,
                                truncated=sem.truncated_tokens, input_tokens=sem.input_tokens)

    def score(self, claims: Sequence[str], evidences: Sequence[str]) -> ScoreBatch:
        return self.compose({"lexical": self.lexical.score(claims, evidences),
                             "semantic": self.semantic.score(claims, evidences)})


def _blend(path: str | None = None, device: str = "cpu", w_lex: float = 0.47, w_sem: float = 0.53,
           window: int | None = None) -> Scorer:
    return BlendScorer(LexicalScorer(),
                       embedding_factory("minilm", resolve_minilm, MINILM_INSTALL)(path, device, window),
                       w_lex=w_lex, w_sem=w_sem)


register(ScorerSpec(name="blend", factory=_blend, description="0.47·lexical + 0.53·minilm", family="surface+embedding",
                    check=lambda: resolver_check(resolve_minilm), install=MINILM_INSTALL,
                    identity=local_identity(resolve_minilm, *ST_LIBS)))
