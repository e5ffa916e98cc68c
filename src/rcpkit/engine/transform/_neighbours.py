"""Dense neighbours of a word among the corpus's most frequent words.

The vocabulary vectors are embedded lazily, once, over the `vocabulary_size`
highest-df content words only, so memory is bounded by
`vocabulary_size × dimension × 4` bytes whatever the corpus size.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import numpy as np

from rcpkit.engine.models import Vectors
from rcpkit.engine.transform._text import is_stopword, stem
from rcpkit.engine.transform._types import Corpus

__all__ = ["DenseNeighbours", "EmbedFunction"]

#: Unit rows, one per text, in input order (an `Embedder.embed` with its kind fixed).
EmbedFunction = Callable[[Sequence[str]], Vectors]


class DenseNeighbours:
    """Nearest vocabulary words by cosine, over a bounded, lazily built vector cache.

    Thread-safe; call `invalidate()` when the vocabulary changes enough to matter.
    """

    def __init__(
        self, embed: EmbedFunction, *, vocabulary_size: int = 4096, batch_size: int = 256
    ) -> None:
        if vocabulary_size < 1 or batch_size < 1:
            raise ValueError("vocabulary_size and batch_size must be >= 1")
        self._embed = embed
        self._vocabulary_size = vocabulary_size
        self._batch_size = batch_size
        self._lock = threading.Lock()
        self._words: tuple[str, ...] | None = None
        self._stems: tuple[str, ...] = ()
        self._matrix: Vectors = np.zeros((0, 0), dtype=np.float32)

    @property
    def cached_words(self) -> int:
        """Words whose vectors are cached (0 before the first lookup)."""
        return len(self._words or ())

    def invalidate(self) -> None:
        """Drop the cached vectors; the next lookup re-embeds the current vocabulary."""
        with self._lock:
            self._words = None

    def _build(self, corpus: Corpus) -> tuple[tuple[str, ...], tuple[str, ...], Vectors]:
        with self._lock:
            if self._words is None:
                candidates = corpus.frequent_words(self._vocabulary_size)
                words = tuple(w for w, _ in candidates if w.isalpha() and not is_stopword(w))
                batches = [
                    self._embed(words[i : i + self._batch_size])
                    for i in range(0, len(words), self._batch_size)
                ]
                self._matrix = (
                    np.vstack(batches).astype(np.float32, copy=False)
                    if batches
                    else np.zeros((0, 0), dtype=np.float32)
                )
                self._stems = tuple(stem(word) for word in words)
                self._words = words
            return self._words, self._stems, self._matrix

    def neighbours(
        self, word: str, corpus: Corpus, k: int, min_similarity: float
    ) -> list[tuple[str, float]]:
        """Up to `k` (word, cosine) pairs, most similar first, other stems only."""
        words, word_stems, matrix = self._build(corpus)
        if not words or k < 1:
            return []
        similarities = matrix @ self._embed([word])[0]
        own = stem(word)
        found = [
            (words[i], float(similarities[i]))
            for i in np.flatnonzero(similarities >= min_similarity)
            if word_stems[i] != own
        ]
        found.sort(key=lambda item: (-item[1], item[0]))
        return found[:k]
