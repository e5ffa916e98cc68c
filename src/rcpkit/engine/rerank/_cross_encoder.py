"""Cross-encoder reranking (`cross-encoder`): query and passage read jointly, one score a pair."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, Unpack, runtime_checkable

import numpy as np

from rcpkit.engine.models import OnnxOptions, OnnxSpec
from rcpkit.engine.rerank._batches import checked_batches
from rcpkit.engine.rerank._interfaces import Checkpoint, RerankMethod, Scores
from rcpkit.engine.rerank._onnx_pair_scorer import OnnxPairScorer
from rcpkit.engine.rerank._sentence_transformers import SentenceTransformersPairScorer

__all__ = ["CrossEncoderReranker", "PairScorer"]


@runtime_checkable
class PairScorer(Protocol):
    """The model half of a cross-encoder: one batch of pairs in, one score per pair out."""

    @property
    def identity(self) -> str:
        """Pinned model identity (§15.7)."""
        ...

    def score_pairs(self, query: str, passages: Sequence[str]) -> Scores:
        """Scores of (query, passage) pairs, in input order, as a single model call."""
        ...


class CrossEncoderReranker:
    """Batches passages through a `PairScorer`, checking for cancellation between batches.

    Passages are batched by length, so a batch is padded to a similar length
    rather than to the longest passage of the request; scores come back in
    input order. Scores are the model's logits: monotonic, of no fixed range.
    """

    def __init__(self, scorer: PairScorer, *, batch_size: int = 16) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        self._scorer = scorer
        self._batch_size = batch_size

    @classmethod
    def from_spec(cls, spec: OnnxSpec) -> CrossEncoderReranker:
        """An ONNX cross-encoder, its model file's sha256 checked before it is opened."""
        return cls(OnnxPairScorer(spec), batch_size=spec.batch_size)

    @classmethod
    def from_onnx(
        cls, model_path: Path, tokenizer_path: Path, **options: Unpack[OnnxOptions]
    ) -> CrossEncoderReranker:
        """An ONNX cross-encoder, its model file's sha256 checked before it is opened."""
        return cls.from_spec(OnnxSpec(model_path, tokenizer_path, **options))

    @classmethod
    def from_onnx_directory(
        cls, directory: Path, **options: Unpack[OnnxOptions]
    ) -> CrossEncoderReranker:
        """A user-supplied directory holding `model.onnx` and `tokenizer.json`.

        `max_tokens` defaults to the directory's own declaration
        (`sentence_bert_config.json`, else tokenizer.json truncation), else 512.
        """
        return cls.from_spec(OnnxSpec.of_directory(directory, **options))

    @classmethod
    def from_sentence_transformers(
        cls,
        name_or_path: str,
        *,
        device: str = "cpu",
        max_tokens: int | None = None,
        batch_size: int = 16,
    ) -> CrossEncoderReranker:
        """A sentence-transformers `CrossEncoder` (needs that package and torch).

        Raises ModelLoadError with the install command when the package is absent.
        """
        scorer = SentenceTransformersPairScorer(name_or_path, device=device, max_tokens=max_tokens)
        return cls(scorer, batch_size=batch_size)

    @property
    def method(self) -> RerankMethod:
        """§7.6 `cross-encoder`."""
        return "cross-encoder"

    @property
    def identity(self) -> str:
        """The scorer's pinned identity."""
        return self._scorer.identity

    @property
    def scorer(self) -> PairScorer:
        """The model that scores each batch."""
        return self._scorer

    def score(
        self, query: str, passages: Sequence[str], checkpoint: Checkpoint | None = None
    ) -> Scores:
        """One relevance score per passage, in input order (§7.6)."""
        scores = np.zeros(len(passages), dtype=np.float32)
        order = sorted(range(len(passages)), key=lambda i: len(passages[i]))
        for rows in checked_batches(order, self._batch_size, checkpoint):
            batch = self._scorer.score_pairs(query, [passages[i] for i in rows])
            if batch.shape != (len(rows),):
                raise ValueError(f"scorer returned {batch.shape} scores for {len(rows)} pairs")
            scores[list(rows)] = batch
        return scores
