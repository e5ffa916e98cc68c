"""Query transformation in the engine (§7.8, §7.7 ``rewrite``): the corpus view it needs.

The transform library (``rcpkit.engine.transform``) is pure; this module gives
it the live corpus of one tenant: the store's surface vocabulary in a
SymSpell-style index (rebuilt at most once a minute, and only after writes,
because building it costs seconds on a large vocabulary) and passage search
for pseudo-relevance feedback (a plain hybrid retrieve, never rewritten).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rcpkit.engine.request import EngineRequest
from rcpkit.engine.store.base import Store
from rcpkit.engine.transform import IndexedCorpus, Transformed, VocabularyIndex, transform

__all__ = ["Passages", "Rewriter"]

# Passage search for pseudo-relevance feedback: (text, k, request) -> passage texts.
Passages = Callable[[str, int, EngineRequest], Sequence[str]]

_REBUILD_AFTER = 60.0  # seconds a stale vocabulary index may keep serving


@dataclass(slots=True)
class _Cached:
    version: int
    built: float
    vocabulary: VocabularyIndex


class Rewriter:
    def __init__(self, store: Store, passages: Passages) -> None:
        self._store = store
        self._passages = passages
        self._lock = threading.Lock()
        self._cache: dict[str | None, _Cached] = {}

    def run(self, method: str, query: str, n: int | None, request: EngineRequest) -> Transformed:
        corpus = IndexedCorpus(
            self._vocabulary(request.tenant),
            max(1, self._store.count(request.tenant)[1]),
            lambda text, k: self._passages(text, k, request),
        )
        return transform(method, query, corpus, n)

    def _vocabulary(self, tenant: str | None) -> VocabularyIndex:
        store = self._store
        with self._lock:
            cached = self._cache.get(tenant)
            fresh = cached is not None and (
                cached.version == store.version or time.monotonic() - cached.built < _REBUILD_AFTER
            )
            if cached is None or not fresh:
                vocabulary = VocabularyIndex(store.vocabulary(tenant))
                cached = _Cached(store.version, time.monotonic(), vocabulary)
                self._cache[tenant] = cached
            return cached.vocabulary
