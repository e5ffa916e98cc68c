"""A tenant's vocabulary over SolrCloud: facets over the ``words`` field, never all of it.

Every chunk's distinct surface words are indexed in ``words`` (``rows.py``), so
a word's document frequency in a tenant is a facet count over the tenant's live
chunks. The whole vocabulary of a million chunks is millions of buckets, built
on every shard and merged on one node; rewriting and memories need the most
frequent words (a terms facet with a limit, refined so every count returned is
exact) and the frequencies of given words (a field facet on those terms only).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from rcpkit.engine.store.solr.collection import Collection as SolrCollection
from rcpkit.engine.store.solr.reads import chunk_filters
from rcpkit.engine.store.vocabulary import Frequent

__all__ = ["SolrVocabulary"]

_ASKED = 500  # words a facet request names (its parameter stays a few kB)


class SolrVocabulary:
    def __init__(self, collection: SolrCollection) -> None:
        self.collection = collection

    def frequent(self, limit: int, tenant: str | None = None) -> Frequent:
        facet = {"type": "terms", "field": "words", "limit": max(1, limit), "mincount": 1,
                 "sort": "count desc", "refine": True}  # fmt: skip
        body = {"query": "*:*", "filter": chunk_filters(tenant), "limit": 0,
                "facet": {"w": facet}}  # fmt: skip
        buckets = self.collection.select(body).get("facets", {}).get("w", {}).get("buckets", [])
        words = [(str(bucket["val"]), int(bucket["count"])) for bucket in buckets]
        return Frequent(words, complete=len(words) < max(1, limit))

    def frequencies(self, words: Collection[str], tenant: str | None = None) -> dict[str, int]:
        asked = sorted(set(words))
        found: dict[str, int] = {}
        for start in range(0, len(asked), _ASKED):
            found.update(self._counts(asked[start : start + _ASKED], tenant))
        return found

    def _counts(self, words: list[str], tenant: str | None) -> dict[str, int]:
        """One field facet limited to ``words`` (Solr's ``{!terms=…}``): their counts only."""
        listed = ",".join(word.replace("\\", "\\\\").replace(",", "\\,") for word in words)
        params: dict[str, Any] = {"facet": "true", "facet.field": "{!terms=$rcpkit.words}words",
                                  "rcpkit.words": listed, "facet.limit": -1,
                                  "facet.mincount": 1, "json.nl": "map"}  # fmt: skip
        body = {"query": "*:*", "filter": chunk_filters(tenant), "limit": 0, "params": params}
        answer = self.collection.select(body)
        counts = answer.get("facet_counts", {}).get("facet_fields", {}).get("words", {})
        return {str(word): int(count) for word, count in counts.items() if int(count) > 0}
