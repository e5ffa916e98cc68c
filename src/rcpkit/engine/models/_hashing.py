"""Deterministic feature-hashing models for fast tests: no weights, no dependencies.

They satisfy the same contracts as the real models (shapes, unit norms,
determinism, batch == single) but carry no semantics beyond shared words.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from rcpkit.engine.models._interfaces import EmbedKind, SparseVector, Vectors, check_kind
from rcpkit.engine.models._vectors import l2_normalize

__all__ = ["HashingEmbedder", "HashingSparseEncoder", "words"]

_WORD = re.compile(r"\w+", re.UNICODE)
# An empty text still gets a unit vector, as a real model's [CLS]/[SEP] would give.
_EMPTY_FEATURE = "\x00empty"


def words(text: str, limit: int | None = None) -> list[str]:
    """Lower-cased Unicode word tokens, the hashing models' tokenizer."""
    found = _WORD.findall(text.lower())
    return found if limit is None else found[:limit]


@lru_cache(maxsize=65536)
def _bucket(feature: str, buckets: int) -> tuple[int, float]:
    # blake2b rather than hash(): Python's str hash is salted per process.
    digest = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "little")
    return digest % buckets, 1.0 if digest >> 63 else -1.0


def _features(tokens: list[str]) -> list[str]:
    bigrams = [f"{a} {b}" for a, b in itertools.pairwise(tokens)]
    return tokens + bigrams if tokens else [_EMPTY_FEATURE]


def _hashed(features: Sequence[str], dimension: int) -> Vectors:
    vector = np.zeros(dimension, dtype=np.float32)
    for feature in features:
        index, sign = _bucket(feature, dimension)
        vector[index] += sign
    return vector


class HashingEmbedder:
    """Signed feature hashing of word unigrams and bigrams into `dimension` dims."""

    def __init__(self, dimension: int = 256, max_tokens: int = 512) -> None:
        if dimension < 2 or max_tokens < 1:
            raise ValueError("dimension must be >= 2 and max_tokens >= 1")
        self._dimension = dimension
        self._max_tokens = max_tokens

    @property
    def dimension(self) -> int:
        """Length of every vector."""
        return self._dimension

    @property
    def identity(self) -> str:
        """Identity naming the algorithm and its only parameter."""
        return f"rcpkit-hashing-v1:{self._dimension}"

    @property
    def max_tokens(self) -> int:
        """Words kept per text."""
        return self._max_tokens

    def embed(self, texts: Sequence[str], kind: EmbedKind = "document") -> Vectors:
        """One unit row per text (the hashing model is symmetric: `kind` is checked only)."""
        check_kind(kind)
        rows = [_hashed(_features(words(t, self._max_tokens)), self._dimension) for t in texts]
        if not rows:
            return np.zeros((0, self._dimension), dtype=np.float32)
        return l2_normalize(np.stack(rows))

    def embed_tokens(self, texts: Sequence[str], kind: EmbedKind = "document") -> list[Vectors]:
        """One unit vector per word; an empty text has no token vectors."""
        check_kind(kind)
        matrices: list[Vectors] = []
        for text in texts:
            tokens = words(text, self._max_tokens)
            rows = [_hashed([token], self._dimension) for token in tokens]
            stacked = np.stack(rows) if rows else np.zeros((0, self._dimension), np.float32)
            matrices.append(l2_normalize(stacked))
        return matrices

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Words in each whole text."""
        return [len(words(text)) for text in texts]


class HashingSparseEncoder:
    """Hashes words into a vocabulary with `log1p(count)` weights, SPLADE-shaped output."""

    def __init__(self, vocabulary_size: int = 1 << 18) -> None:
        if vocabulary_size < 2:
            raise ValueError("vocabulary_size must be >= 2")
        self._vocabulary_size = vocabulary_size

    @property
    def identity(self) -> str:
        """Identity naming the algorithm and its only parameter."""
        return f"rcpkit-hashing-sparse-v1:{self._vocabulary_size}"

    @property
    def vocabulary_size(self) -> int:
        """Number of hash buckets."""
        return self._vocabulary_size

    def term_ids(self, text: str) -> list[int]:
        """Vocabulary ids of the words of `text`, as `encode` assigns them."""
        return [_bucket(word, self._vocabulary_size)[0] for word in words(text)]

    def encode(self, texts: Sequence[str], kind: EmbedKind = "document") -> list[SparseVector]:
        """One sparse vector per text; `kind` is checked only."""
        check_kind(kind)
        encoded: list[SparseVector] = []
        for text in texts:
            ids, counts = np.unique(
                np.array(self.term_ids(text), dtype=np.int64), return_counts=True
            )
            encoded.append(SparseVector(ids, np.log1p(counts).astype(np.float32)))
        return encoded
