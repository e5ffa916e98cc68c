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
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rcpkit.engine.transform import IndexedCorpus, Transformed, VocabularyIndex, transform
from rcpkit.protocol import messages as m
from rcpkit.server.context import RequestContext

if TYPE_CHECKING:
    from rcpkit.engine.engine import Engine

__all__ = ["Rewriter"]

_REBUILD_AFTER = 60.0  # seconds a stale vocabulary index may keep serving


@dataclass(slots=True)
class _Cached:
    version: int
    built: float
    vocabulary: VocabularyIndex


class Rewriter:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._lock = threading.Lock()
        self._cache: dict[str | None, _Cached] = {}

    def run(self, method: str, query: str, n: int | None, ctx: RequestContext) -> Transformed:
        corpus = IndexedCorpus(
            self._vocabulary(ctx.tenant),
            max(1, self._engine.store.count(ctx.tenant)[1]),
            lambda text, k: self._passages(text, k, ctx),
        )
        return transform(method, query, corpus, n)

    def _vocabulary(self, tenant: str | None) -> VocabularyIndex:
        store = self._engine.store
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

    def _passages(self, text: str, k: int, ctx: RequestContext) -> Sequence[str]:
        from rcpkit.engine.retrieve.pipeline import retrieve

        feedback = RequestContext(ctx.id, "retrieve", {}, deadline=ctx.deadline, tenant=ctx.tenant)
        result = retrieve(self._engine, m.RetrieveParams(query=text, k=k), feedback)
        return [hit.text or "" for hit in result.hits]
