"""Sentence embeddings and token vectors from any BERT-style token encoder.

The encoder (onnxruntime or numpy) yields per-token hidden states; this
module does the sentence-transformers pooling (mean over the attention mask,
then L2) for §7.3, and keeps the normalised content tokens for §7.5.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Protocol, Unpack

import numpy as np
import numpy.typing as npt

from rcpkit.engine.models._interfaces import EmbedKind, Vectors, check_kind
from rcpkit.engine.models._onnx_session import OnnxTokenEncoder
from rcpkit.engine.models._onnx_spec import OnnxOptions, OnnxSpec
from rcpkit.engine.models._tokenizer import ModelTokenizer, TokenBatch
from rcpkit.engine.models._vectors import l2_normalize

__all__ = ["TokenEncoder", "TransformerEmbedder"]


class TokenEncoder(Protocol):
    """Anything that maps a token batch to `(batch, sequence, hidden)` states."""

    def hidden_states(self, batch: TokenBatch) -> npt.NDArray[np.float32]:
        """Per-token hidden states for a padded batch."""
        ...


class TransformerEmbedder:
    """The real `Embedder`: mean-pooled, L2-normalised transformer outputs.

    `prefixes` serves asymmetric models (e5's "query: "/"passage: ") through
    §7.3 `kind`; symmetric models such as all-MiniLM-L6-v2 leave it empty.
    """

    def __init__(
        self,
        encoder: TokenEncoder,
        tokenizer: ModelTokenizer,
        *,
        identity: str,
        batch_size: int = 16,
        prefixes: Mapping[EmbedKind, str] | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        self._encoder = encoder
        self._tokenizer = tokenizer
        self._identity = identity
        self._batch_size = batch_size
        self._prefixes = dict(prefixes or {})
        # One probe pass learns the width and fails at load time, not on the first request.
        probe = next(self._tokenizer.batches([""], 1))
        self._dimension = int(self._encoder.hidden_states(probe).shape[-1])

    @classmethod
    def from_spec(
        cls, spec: OnnxSpec, prefixes: Mapping[EmbedKind, str] | None = None
    ) -> TransformerEmbedder:
        """Load an ONNX encoder after checking its sha256 (when one is expected)."""
        sha256 = spec.verify()
        return cls(
            OnnxTokenEncoder(spec.model, spec.threads),
            ModelTokenizer(spec.tokenizer, spec.token_limit()),
            identity=spec.identity_of(sha256),
            batch_size=spec.batch_size,
            prefixes=prefixes,
        )

    @classmethod
    def from_onnx(
        cls,
        model_path: Path,
        tokenizer_path: Path,
        *,
        prefixes: Mapping[EmbedKind, str] | None = None,
        **options: Unpack[OnnxOptions],
    ) -> TransformerEmbedder:
        """Load an ONNX encoder after checking its sha256 (when one is expected)."""
        return cls.from_spec(OnnxSpec(model_path, tokenizer_path, **options), prefixes)

    @classmethod
    def from_onnx_directory(
        cls,
        directory: Path,
        *,
        prefixes: Mapping[EmbedKind, str] | None = None,
        **options: Unpack[OnnxOptions],
    ) -> TransformerEmbedder:
        """Load a user-supplied directory holding `model.onnx` and `tokenizer.json`."""
        return cls.from_spec(OnnxSpec.of_directory(directory, **options), prefixes)

    @property
    def dimension(self) -> int:
        """Hidden size of the encoder (384 for MiniLM)."""
        return self._dimension

    @property
    def identity(self) -> str:
        """The pinned identity given at load time (§15.7)."""
        return self._identity

    @property
    def max_tokens(self) -> int:
        """Word pieces per input, [CLS] and [SEP] included; the rest is truncated."""
        return self._tokenizer.max_tokens

    def embed(self, texts: Sequence[str], kind: EmbedKind = "document") -> Vectors:
        """Mean-pool each text's tokens (special tokens included, as trained), then L2."""
        pooled = np.zeros((len(texts), self._dimension), dtype=np.float32)
        for batch, states in self._forward(texts, kind):
            mask = batch.attention_mask[..., np.newaxis].astype(np.float32)
            sums = (states * mask).sum(axis=1)
            pooled[batch.rows] = sums / np.maximum(mask.sum(axis=1), 1.0)
        return l2_normalize(pooled)

    def embed_tokens(self, texts: Sequence[str], kind: EmbedKind = "document") -> list[Vectors]:
        """L2-normalised content-token vectors; [CLS], [SEP] and padding are excluded."""
        matrices: list[Vectors] = [np.zeros((0, self._dimension), np.float32)] * len(texts)
        for batch, states in self._forward(texts, kind):
            for position, row in enumerate(batch.rows):
                matrices[row] = l2_normalize(states[position][batch.content_mask[position]])
        return matrices

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Word pieces in each whole text, untruncated and without special tokens."""
        return self._tokenizer.count(texts)

    def _forward(
        self, texts: Sequence[str], kind: EmbedKind
    ) -> Iterator[tuple[TokenBatch, npt.NDArray[np.float32]]]:
        prefix = self._prefixes.get(check_kind(kind), "")
        inputs = [prefix + text for text in texts] if prefix else texts
        for batch in self._tokenizer.batches(inputs, self._batch_size):
            yield batch, self._encoder.hidden_states(batch)
