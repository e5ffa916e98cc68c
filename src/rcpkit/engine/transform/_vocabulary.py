"""A SymSpell-style deletion index over the corpus vocabulary, and a `Corpus` built on it.

SymSpell (Garbe, 2012) precomputes every string reachable by deleting up to
`max_distance` characters from each word's first `prefix_length` characters.
Two words within d edits share such a deletion, so a lookup generates the
query word's deletions, collects the words filed under them and verifies
each with the true distance: no scan of the vocabulary.
"""

from __future__ import annotations

import itertools
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from rcpkit.engine.transform._distance import edit_distance
from rcpkit.engine.transform._types import SearchFunction

__all__ = ["IndexedCorpus", "VocabularyIndex", "deletions"]


def deletions(word: str, max_distance: int) -> set[str]:
    """`word` and every string made by deleting up to `max_distance` of its characters."""
    found = {word}
    for count in range(1, min(max_distance, len(word)) + 1):
        for gone in itertools.combinations(range(len(word)), count):
            found.add("".join(char for i, char in enumerate(word) if i not in gone))
    return found


class VocabularyIndex:
    """Surface words with their document frequencies, searchable by edit distance.

    Every word keeps its df; only alphabetic words of 3 to `max_length`
    characters, the `max_words` most frequent of them, get deletion entries,
    since a spelling correction never targets a number, a code or a fragment.
    Deletions are stored as 64-bit string hashes in one sorted array with the
    owning word beside each (12 bytes an entry); a hash collision only adds a
    candidate that the distance check then rejects. Immutable once built (safe
    to share across threads); rebuild it when the vocabulary changes.
    """

    def __init__(
        self,
        words: Iterable[tuple[str, int]],
        *,
        max_distance: int = 2,
        prefix_length: int = 7,
        max_words: int = 100_000,
        max_length: int = 32,
    ) -> None:
        if max_distance < 0 or prefix_length <= max_distance or max_words < 0:
            raise ValueError("need max_distance >= 0, prefix_length > max_distance, max_words >= 0")
        self._max_distance = max_distance
        self._prefix_length = prefix_length
        self._frequency = {word: df for word, df in words if df > 0}
        self._by_frequency = sorted(self._frequency.items(), key=lambda item: (-item[1], item[0]))
        targets = (w for w, _ in self._by_frequency if 3 <= len(w) <= max_length and w.isalpha())
        self._words = list(itertools.islice(targets, max_words))
        self._hashes, self._owners = self._file(self._words)

    def _deletion_hashes(self, word: str, max_distance: int) -> list[int]:
        return [hash(deleted) for deleted in deletions(word[: self._prefix_length], max_distance)]

    def _file(self, words: list[str]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int32]]:
        hashes, owners = array("q"), array("i")
        by_prefix: dict[str, array[int]] = {}  # inflections share a prefix: hash it once
        for key, word in enumerate(words):
            prefix = word[: self._prefix_length]
            if prefix not in by_prefix:
                by_prefix[prefix] = array("q", self._deletion_hashes(prefix, self._max_distance))
            hashes.extend(by_prefix[prefix])
            owners.extend(itertools.repeat(key, len(by_prefix[prefix])))
        order = np.argsort(np.frombuffer(hashes, dtype=np.int64), kind="stable")
        return np.frombuffer(hashes, dtype=np.int64)[order], np.frombuffer(owners, np.int32)[order]

    def __len__(self) -> int:
        return len(self._frequency)

    @property
    def indexed_words(self) -> int:
        """Words that carry deletion entries (the correction targets)."""
        return len(self._words)

    def document_frequency(self, word: str) -> int:
        """The df of `word`, 0 when absent."""
        return self._frequency.get(word, 0)

    def frequent_words(self, limit: int) -> list[tuple[str, int]]:
        """The `limit` highest-df words, ties by word."""
        return self._by_frequency[: max(0, limit)]

    def words_like(self, word: str, max_distance: int) -> list[tuple[str, int]]:
        """Indexed words within `max_distance` edits of `word`, nearest then most frequent."""
        limit = min(max_distance, self._max_distance)
        probes = np.array(self._deletion_hashes(word, limit), dtype=np.int64)
        starts = np.searchsorted(self._hashes, probes, side="left")
        ends = np.searchsorted(self._hashes, probes, side="right")
        keys = {int(k) for a, b in zip(starts, ends, strict=True) for k in self._owners[a:b]}
        scored = []
        for key in keys:
            candidate = self._words[key]
            distance = edit_distance(word, candidate, limit)
            if distance <= limit:
                scored.append((distance, -self._frequency[candidate], candidate))
        scored.sort()
        return [(candidate, -negative_df) for _, negative_df, candidate in scored]


@dataclass(frozen=True, slots=True)
class IndexedCorpus:
    """A `Corpus` from a vocabulary index, a unit count and a passage search function."""

    vocabulary: VocabularyIndex
    documents: int
    search_passages: SearchFunction

    def total_documents(self) -> int:
        """The unit count given at construction."""
        return self.documents

    def document_frequency(self, word: str) -> int:
        """The vocabulary's df of `word`."""
        return self.vocabulary.document_frequency(word)

    def words_like(self, word: str, max_distance: int) -> Sequence[tuple[str, int]]:
        """The vocabulary's words within `max_distance` edits."""
        return self.vocabulary.words_like(word, max_distance)

    def frequent_words(self, limit: int) -> Sequence[tuple[str, int]]:
        """The vocabulary's highest-df words."""
        return self.vocabulary.frequent_words(limit)

    def search(self, query: str, k: int) -> Sequence[str]:
        """The search function's top `k` passage texts."""
        return list(self.search_passages(query, k))[:k]
