"""The query index's operations as Solr requests: the servers hold no corpus in memory.

What ``engine/index`` answers from its mirror for the other backends is asked of
the collection here, each read one request (issue 48):

* lexical top-k: BM25 over the ``terms`` field (rcpkit's own analysed terms, the
  title's weighted), with the collection's term statistics on every shard
  (``ExactStatsCache`` in the configset), so a sharded collection scores as one
  index does; ties by the smaller key;
* §8 filters: ``fq`` (``engine/filters/_solr.py``), and the tenant (§15.6) one more;
* dense top-k: ``{!knn}`` (HNSW) pre-filtered by the same ``fq``; exact cosine
  (``vectorSimilarity``) when the filtered set is small or exact search is asked;
* the statistics other stages score passages with: ``N`` and ``n`` by counting,
  the token total by a JSON facet over the stored lengths.

Only the latest committed state is read: Solr keeps no older versions, so a
``version`` argument is the latest (the store advertises no snapshots).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from rcpkit.engine.filters import Filter, compile_solr
from rcpkit.engine.scoring.bm25 import query_tokens, query_weights
from rcpkit.engine.store.base import CommitResult
from rcpkit.engine.store.solr.collection import Collection, terms_filter
from rcpkit.engine.store.solr.rows import tenant_value, vector_field

__all__ = ["SolrDense", "SolrIndex", "chunk_filters"]

Ranked = list[tuple[int, float]]
Keys = npt.NDArray[np.int64]
_ROWS_HOLDING_MAX = 10_000  # a passage lookup's candidate list is cut here


def chunk_filters(tenant: str | None, filter: Filter | None = None) -> list[str]:
    """The ``fq`` of the live chunks ``tenant`` sees that pass ``filter``."""
    filters = ["kind:chunk", terms_filter("tenant", [tenant_value(tenant)])]
    if filter is not None:
        filters.append(compile_solr(filter))
    return filters


def _quoted(term: str) -> str:
    return '"' + term.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _lexical_query(weights: dict[str, float]) -> str:
    # A repeated query term weighs ``1 + ln(c)`` on every lexical path (issue 50): a Lucene
    # boost multiplies that term's BM25 score, which is the same product. Weight 1 is left
    # unboosted so a query of distinct terms is the plain disjunction it always was.
    return " OR ".join(
        f"terms:{_quoted(token)}" + ("" if weight == 1.0 else f"^{weight!r}")
        for token, weight in weights.items()
    )


def _ranked(docs: list[dict[str, Any]]) -> Ranked:
    return [(int(doc["key"]), float(doc["score"])) for doc in docs]


class SolrIndex:
    """:class:`~rcpkit.engine.index.Index` over one Solr collection."""

    def __init__(self, collection: Collection) -> None:
        self._collection = collection

    def lexical(
        self,
        terms: Sequence[str],
        limit: int,
        filter: Filter | None = None,
        version: int | None = None,
        tenant: str | None = None,
        *,
        floor: float = 0.0,
    ) -> Ranked:
        weights = query_weights(terms)
        if not weights or limit <= 0:
            return []
        body = {
            "query": _lexical_query(weights),
            "filter": chunk_filters(tenant, filter),
            "fields": "key,score",
            "limit": limit,
            "sort": "score desc,key asc",
        }
        return _ranked(self._collection.docs(body))

    def lexical_of(
        self,
        terms: Sequence[str],
        keys: Sequence[int],
        version: int | None = None,
        tenant: str | None = None,
    ) -> dict[int, float] | None:
        scores = dict.fromkeys(keys, 0.0)
        weights = query_weights(terms)
        if not weights or not scores:
            return scores
        body = {
            "query": _lexical_query(weights),
            "filter": [*chunk_filters(tenant), terms_filter("key", list(scores))],
            "fields": "key,score",
            "limit": len(scores),
        }
        scores.update(_ranked(self._collection.docs(body)))
        return scores

    def rows_holding(
        self, tokens: Sequence[str], version: int | None = None, tenant: str | None = None
    ) -> Keys:
        wanted = query_tokens(tokens)
        if not wanted:
            return np.zeros(0, dtype=np.int64)
        _, _, counts = self.lexical_statistics(wanted, version, tenant)
        if min(counts.values(), default=0) == 0:
            return np.zeros(0, dtype=np.int64)
        rarest = min(wanted, key=lambda token: counts[token])
        body = {
            "query": f"terms:{_quoted(rarest)}",
            "filter": chunk_filters(tenant),
            "fields": "key",
            "limit": _ROWS_HOLDING_MAX,
            "sort": "key asc",
        }
        return np.array([int(doc["key"]) for doc in self._collection.docs(body)], dtype=np.int64)

    def learned_sparse(
        self,
        terms: Sequence[int],
        weights: Sequence[float],
        limit: int,
        filter: Filter | None = None,
        version: int | None = None,
        tenant: str | None = None,
    ) -> Ranked:
        raise RuntimeError("the Solr backend stores no learned-sparse (SPLADE) weights")

    def lexical_statistics(
        self, tokens: Sequence[str], version: int | None = None, tenant: str | None = None
    ) -> tuple[int, float, dict[str, int]]:
        """``N``, ``avgdl`` and ``n`` per token over ``tenant``'s live chunks, one request."""
        facets: dict[str, Any] = {"length": "sum(length)"}
        wanted = list(dict.fromkeys(tokens))
        for position, token in enumerate(wanted):
            facets[f"t{position}"] = {"type": "query", "q": f"terms:{_quoted(token)}"}
        body = {"query": "*:*", "filter": chunk_filters(tenant), "limit": 0, "facet": facets}
        answer = self._collection.select(body)
        documents = int(answer["response"]["numFound"])
        found = answer.get("facets", {})
        total = float(found.get("length", 0.0) or 0.0)
        counts = {
            token: int(found.get(f"t{position}", {}).get("count", 0))
            for position, token in enumerate(wanted)
        }
        return documents, (total / documents if documents else 0.0), counts

    def filtered_keys(
        self, filter: Filter, version: int | None = None, tenant: str | None = None
    ) -> Keys:
        found = self._collection.each(chunk_filters(tenant, filter), "key", "id asc")
        return np.array(sorted(int(doc["key"]) for doc in found), dtype=np.int64)


class SolrDense:
    """Dense recall in Solr: HNSW (``{!knn}``) or exact cosine; score = cosine (§6.1)."""

    def __init__(self, collection: Collection, dimension: int, exact_max: int) -> None:
        self._collection = collection
        self._field = vector_field(dimension)
        self.exact_max = exact_max  # filtered sets up to this size are scored exactly

    def search(
        self,
        query: npt.NDArray[np.float32],
        k: int,
        filter: Filter | None = None,
        version: int | None = None,
        tenant: str | None = None,
    ) -> Ranked:
        if k <= 0:
            return []
        filters = chunk_filters(tenant, filter)
        vector = json.dumps([float(x) for x in query])
        if self._collection.count(filters) <= self.exact_max:
            q = f"{{!func}}vectorSimilarity(FLOAT32,COSINE,{self._field},{vector})"
        else:
            q = f"{{!knn f={self._field} topK={k}}}{vector}"
        body = {"query": q, "filter": filters, "fields": "key,score", "limit": k,
                "sort": "score desc,key asc"}  # fmt: skip
        # Solr's cosine similarity is (1 + cos) / 2; the protocol's score is the cosine.
        return [(key, 2.0 * score - 1.0) for key, score in _ranked(self._collection.docs(body))]

    def vectors_of(self, keys: Sequence[int]) -> dict[int, npt.NDArray[np.float32]]:
        if not keys:
            return {}
        body = {"query": "*:*", "filter": ["kind:chunk", terms_filter("key", list(keys))],
                "fields": f"key,{self._field}", "limit": len(keys)}  # fmt: skip
        return {
            int(doc["key"]): np.asarray(doc[self._field], dtype=np.float32)
            for doc in self._collection.docs(body)
            if self._field in doc
        }

    def apply(self, result: CommitResult, tenant: str | None) -> None:
        """Nothing to learn: Solr searches what it committed."""

    def drop(self, keys: Sequence[int]) -> None:
        """Nothing to forget: Solr deleted them."""

    def live_count(self, tenant: str | None = None) -> int:
        return self._collection.count(chunk_filters(tenant))

    def sample(self, limit: int, tenant: str | None = None) -> npt.NDArray[np.float32]:
        body = {"query": "*:*", "filter": chunk_filters(tenant), "fields": self._field,
                "limit": limit, "sort": "key asc"}  # fmt: skip
        rows = [doc[self._field] for doc in self._collection.docs(body) if self._field in doc]
        if not rows:
            return np.zeros((0, 0), dtype=np.float32)
        return np.asarray(rows, dtype=np.float32)
