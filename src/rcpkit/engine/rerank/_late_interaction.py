"""Late-interaction reranking: §7.5 MaxSim over an embedder's token vectors (`colbert`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal

import numpy as np

from rcpkit.engine.models import Embedder, EmbedKind, Vectors, check_kind, maxsim_many
from rcpkit.engine.rerank._batches import checked_batches
from rcpkit.engine.rerank._interfaces import Checkpoint, RerankMethod, Scores
from rcpkit.engine.rerank._token_cache import TokenCacheInfo, TokenMatrixCache, text_key

__all__ = ["DEFAULT_CACHE_BYTES", "DEFAULT_CACHE_SIZE", "LateInteractionReranker"]

DEFAULT_CACHE_SIZE: Final = 4096
# ~200 MiniLM passages of 200 word pieces (384 float32 each): a few rerank sets.
DEFAULT_CACHE_BYTES: Final = 64 * 1024 * 1024


class LateInteractionReranker:
    """ColBERT-style MaxSim reranking over any `Embedder`'s per-token vectors.

    `score` is the §7.5 MaxSim sum, unnormalised: for each query token, the best
    cosine (token rows are unit length) against any passage token, summed over
    the query's tokens. That sum grows with the query's length, which does not
    matter for ranking (§4.6: scores compare only within one response, and one
    response has one query); a caller wanting a bounded value divides by the
    query's token count, `len(token_matrices([query], "query")[0])`, for the
    mean best cosine in [-1, 1].

    This is advertised honestly as method `colbert` with identity
    `maxsim:<embedder identity>`, but it is *not* a trained ColBERT: a mean-pooled
    bi-encoder's token states were never trained for token-level matching, so
    it is a late-interaction reranker by mechanism, not by training. Passages
    longer than the embedder's `max_tokens` are scored on their first tokens only.

    Passage token matrices are cached in a bounded LRU keyed by a digest of the
    passage text, so a passage reranked again (the next turn of an agentic
    session, a repeated query) costs one matrix product instead of a forward pass.
    """

    def __init__(
        self,
        embedder: Embedder,
        *,
        batch_size: int = 16,
        cache_size: int = DEFAULT_CACHE_SIZE,
        cache_bytes: int = DEFAULT_CACHE_BYTES,
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        self._embedder = embedder
        self._batch_size = batch_size
        self._cache = TokenMatrixCache(cache_size, cache_bytes)

    @property
    def method(self) -> RerankMethod:
        """§7.6 `colbert`: late interaction over token vectors."""
        return "colbert"

    @property
    def identity(self) -> str:
        """`maxsim:` and the embedder's pinned identity (§15.7)."""
        return f"maxsim:{self._embedder.identity}"

    @property
    def similarity(self) -> Literal["cosine"]:
        """§7.5 `multiVector.similarity`: token rows are unit length, so dot is cosine."""
        return "cosine"

    @property
    def dimension(self) -> int:
        """Width of every token vector."""
        return self._embedder.dimension

    @property
    def embedder(self) -> Embedder:
        """The model whose token vectors are compared."""
        return self._embedder

    def score(
        self, query: str, passages: Sequence[str], checkpoint: Checkpoint | None = None
    ) -> Scores:
        """§7.5 MaxSim sum of the query against each passage, in input order."""
        if not passages:
            return np.zeros(0, dtype=np.float32)
        (query_tokens,) = self.token_matrices([query], "query", checkpoint)
        return maxsim_many(query_tokens, self.token_matrices(passages, "document", checkpoint))

    def token_matrices(
        self,
        texts: Sequence[str],
        kind: EmbedKind = "document",
        checkpoint: Checkpoint | None = None,
    ) -> list[Vectors]:
        """One unit-row token matrix per text: the §7.5 `embed/multi` result.

        Documents go through the cache (each distinct text is embedded once);
        queries are not cached, being seldom repeated. Cached matrices are
        read-only and shared.
        """
        if check_kind(kind) == "query":
            return self._query_matrices(texts, checkpoint)
        return self._document_matrices(texts, checkpoint)

    def cache_info(self) -> TokenCacheInfo:
        """Hits, misses, entries and bytes of the passage cache."""
        return self._cache.info()

    def clear_cache(self) -> None:
        """Forget every cached passage matrix."""
        self._cache.clear()

    def _query_matrices(self, texts: Sequence[str], checkpoint: Checkpoint | None) -> list[Vectors]:
        matrices: list[Vectors] = []
        for batch in checked_batches(texts, self._batch_size, checkpoint):
            matrices.extend(self._embedder.embed_tokens(batch, "query"))
        return matrices

    def _document_matrices(
        self, texts: Sequence[str], checkpoint: Checkpoint | None
    ) -> list[Vectors]:
        keys = [text_key(text) for text in texts]
        found: dict[bytes, Vectors] = {}
        missing: dict[bytes, str] = {}
        for key, text in zip(keys, texts, strict=True):
            if key in found or key in missing:
                continue
            cached = self._cache.get(key)
            if cached is None:
                missing[key] = text
            else:
                found[key] = cached
        # The embedder pads each batch to its longest text: batch similar lengths together.
        pending = sorted(missing.items(), key=lambda item: len(item[1]))
        for batch in checked_batches(pending, self._batch_size, checkpoint):
            matrices = self._embedder.embed_tokens([text for _, text in batch], "document")
            # Cached batch by batch: a cancelled request's finished work serves its retry.
            for (key, _), matrix in zip(batch, matrices, strict=True):
                found[key] = self._cache.put(key, matrix)
        return [found[key] for key in keys]
