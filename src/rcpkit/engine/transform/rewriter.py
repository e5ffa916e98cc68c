"""Query transformation in the engine (§7.8, §7.7 ``rewrite``): the corpus view it needs.

The transform library (``rcpkit.engine.transform``) is pure; this module gives
it the live corpus of one tenant: the vocabulary's most frequent surface words
in a SymSpell-style index (rebuilt at most once a minute, and only after writes,
because building it costs seconds on a large vocabulary) and passage search
for pseudo-relevance feedback (a plain hybrid retrieve, never rewritten). A
vocabulary that lists only its most frequent words (SolrCloud's, issue 48) is
asked the document frequency of any other word the transform reads, the query's
words together, and remembers the answers until the index is rebuilt.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from rcpkit.engine.request import EngineRequest
from rcpkit.engine.store.base import Store
from rcpkit.engine.store.vocabulary import Vocabulary
from rcpkit.engine.text.analysis import surface_words
from rcpkit.engine.transform import IndexedCorpus, Transformed, VocabularyIndex, transform

__all__ = ["INDEXED_WORDS", "Passages", "Rewriter"]

# Passage search for pseudo-relevance feedback: (text, k, request) -> passage texts.
Passages = Callable[[str, int, EngineRequest], Sequence[str]]

_REBUILD_AFTER = 60.0  # seconds a stale vocabulary index may keep serving
# The spelling index's correction targets (VocabularyIndex's max_words), and the words
# asked of a vocabulary that lists only its most frequent: twice as many, since only the
# alphabetic ones of 3 to 32 letters are targets.
INDEXED_WORDS = 100_000
_REMEMBERED = 100_000  # frequencies asked and kept beside one index, at most


@dataclass(slots=True)
class _Cached:
    version: int
    built: float
    vocabulary: VocabularyIndex
    complete: bool  # every word is in the index: one that is not has df 0
    asked: dict[str, int] = field(default_factory=dict)  # dfs of other words, asked since


@dataclass(frozen=True, slots=True)
class _Corpus(IndexedCorpus):
    """The indexed corpus, with the df of a word beyond the index asked when read."""

    cached: _Cached
    ask: Callable[[Iterable[str]], dict[str, int]]

    def document_frequency(self, word: str) -> int:
        known = self.vocabulary.document_frequency(word)
        if known or self.cached.complete:
            return known
        if word not in self.cached.asked:
            self.remember([word])
        return self.cached.asked.get(word, 0)

    def remember(self, words: Iterable[str]) -> None:
        """The dfs of ``words`` the index does not hold, asked together."""
        cached = self.cached
        if cached.complete:
            return
        wanted = [
            w for w in words if w not in cached.asked and not self.vocabulary.document_frequency(w)
        ]
        if not wanted:
            return
        if len(cached.asked) > _REMEMBERED:
            cached.asked.clear()
        found = self.ask(wanted)
        cached.asked.update({word: found.get(word, 0) for word in wanted})


class Rewriter:
    def __init__(
        self,
        store: Store,
        vocabulary: Vocabulary,
        passages: Passages,
        indexed_words: int = INDEXED_WORDS,
    ) -> None:
        self._store = store
        self._words = vocabulary
        self._passages = passages
        self._indexed_words = indexed_words
        self._lock = threading.Lock()
        self._cache: dict[str | None, _Cached] = {}

    def run(self, method: str, query: str, n: int | None, request: EngineRequest) -> Transformed:
        tenant = request.tenant
        cached = self._vocabulary(tenant)
        corpus = _Corpus(
            cached.vocabulary,
            max(1, self._store.count(tenant)[1]),
            lambda text, k: self._passages(text, k, request),
            cached,
            lambda words: self._words.frequencies(list(words), tenant),
        )
        corpus.remember(surface_words(query))  # one request for the query's words
        return transform(method, query, corpus, n)

    def _vocabulary(self, tenant: str | None) -> _Cached:
        store = self._store
        with self._lock:
            cached = self._cache.get(tenant)
            fresh = cached is not None and (
                cached.version == store.version or time.monotonic() - cached.built < _REBUILD_AFTER
            )
            if cached is None or not fresh:
                frequent = self._words.frequent(2 * self._indexed_words, tenant)
                vocabulary = VocabularyIndex(frequent.words, max_words=self._indexed_words)
                cached = _Cached(store.version, time.monotonic(), vocabulary, frequent.complete)
                self._cache[tenant] = cached
            return cached
