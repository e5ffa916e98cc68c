"""A PostgreSQL store's reads: rows by key or id, and what SQL answers for the index.

The query index ranks from its mirror; SQL answers a version the mirror no
longer holds (``lexical_sql``, ``filtered_keys_sql``), SPLADE's recall (its
weights are not mirrored) and pgvector's dense search (``open_dense``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from rcpkit.engine.filters import Filter, compile_postgres
from rcpkit.engine.index import SparseQuery
from rcpkit.engine.scoring.bm25 import BM25, query_weights
from rcpkit.engine.store.base import (
    CHUNK_FIELDS,
    DOCUMENT_FIELDS,
    JOINED_DOCUMENT_FIELDS,
    ChunkRow,
    DocumentRow,
    Keys,
    chunk_row,
    document_row,
)
from rcpkit.engine.store.postgres.connections import Connections
from rcpkit.engine.store.postgres.dense import (
    VECTOR_BYTES,
    HnswSettings,
    PostgresDenseSearch,
    ensure_vector_index,
    vectors_read,
)
from rcpkit.engine.store.postgres.errors import unavailable, unstorable
from rcpkit.engine.store.postgres.lexical import lexical_sql, named

__all__ = ["Reads"]


class Reads(Connections):
    """Reads of the committed rows; ``bm25`` and ``hnsw`` are the store's settings."""

    bm25: BM25
    hnsw: HnswSettings

    def open_dense(self, dimension: int, policy: Any = None) -> PostgresDenseSearch:
        """pgvector search in the database; types and indexes the column on first use."""
        settings = self.hnsw
        if not self.read_only:
            with self.connection() as connection:
                ensure_vector_index(connection, dimension, settings)
        return PostgresDenseSearch(self, settings)

    @unavailable()
    def lexical_sql(
        self,
        terms: Sequence[str],
        limit: int,
        filter: Filter | None = None,
        version: int | None = None,
        tenant: str | None = None,
    ) -> list[tuple[int, float]]:
        """The same BM25 computed in one SQL statement (``lexical``), scoring every posting."""
        weights = query_weights(terms)  # a repeat weighs the term, 1 + ln(count) (bm25)
        if not weights or limit <= 0:
            return []
        filter_sql, params = self._compiled(filter, "c.filter_meta")
        params.update(
            terms=list(weights),
            weights=list(weights.values()),
            tenant=tenant or "",
            limit=limit,
            k1=self.bm25.k1,
            b=self.bm25.b,
            title_weight=self.bm25.title_weight,
            body_weight=self.bm25.body_weight,
            version=self.version if version is None else version,
        )
        with self.reading() as connection:
            rows = connection.execute(lexical_sql(filter_sql), params).fetchall()
        return [(int(key), float(score)) for key, score in rows]

    @staticmethod
    def _compiled(filter: Filter | None, column: str) -> tuple[str | None, dict[str, object]]:
        if filter is None:
            return None, {}
        sql, positional = compile_postgres(filter, column)  # §8, §15.4: bound parameters
        return named(sql, positional, "f")

    @unavailable()
    def learned_sparse_sql(self, query: SparseQuery) -> list[tuple[int, float]]:
        """SPLADE recall in SQL (``QueryIndex.learned_sparse``: the weights are not mirrored)."""
        filter_sql, params = self._compiled(query.filter, "c.filter_meta")
        params.update(
            terms=list(query.terms),
            weights=list(query.weights),
            tenant=query.tenant or "",
            limit=query.limit,
            version=self.version if query.version is None else query.version,
        )
        with self.reading() as connection:
            rows = connection.execute(
                "SELECT s.key, sum(s.weight * q.weight) AS score"
                " FROM unnest(%(terms)s::int[], %(weights)s::float8[]) AS q(term, weight)"
                " JOIN splade AS s ON s.term = q.term JOIN chunks AS c ON c.key = s.key"
                " WHERE c.tenant = %(tenant)s AND c.added <= %(version)s"
                " AND (c.removed IS NULL OR c.removed > %(version)s)"
                f" AND {filter_sql or 'true'}"
                " GROUP BY s.key ORDER BY score DESC, s.key LIMIT %(limit)s",
                params,
            ).fetchall()
        return [(int(key), float(score)) for key, score in rows]

    @unavailable()
    def filtered_keys_sql(
        self, filter: Filter, version: int | None = None, tenant: str | None = None
    ) -> Keys:
        """The §8 filter in SQL, for a version the query index does not hold."""
        filter_sql, params = self._compiled(filter, "filter_meta")
        params.update(tenant=tenant or "", version=self.version if version is None else version)
        with self.reading() as connection:
            rows = connection.execute(
                "SELECT key FROM chunks WHERE tenant = %(tenant)s AND added <= %(version)s"
                f" AND (removed IS NULL OR removed > %(version)s) AND {filter_sql} ORDER BY key",
                params,
            ).fetchall()
        return np.fromiter((row[0] for row in rows), dtype=np.int64)

    @unavailable()
    def fetch(self, keys: Sequence[int]) -> dict[int, ChunkRow]:
        """Chunks by key, whatever their version (a pinned reader may need old ones)."""
        if not keys:
            return {}
        with self.reading() as connection:
            rows = connection.execute(
                f"SELECT {CHUNK_FIELDS} FROM chunks c JOIN documents d ON d.doc_key = c.doc_key"
                " WHERE c.key = ANY(%s)",
                (list(keys),),
            ).fetchall()
        return {int(row[0]): chunk_row(row) for row in rows}

    @unavailable()
    def documents_of(self, keys: Sequence[int]) -> dict[int, DocumentRow]:
        if not keys:
            return {}
        with self.reading() as connection:
            rows = connection.execute(
                f"SELECT c.key, {JOINED_DOCUMENT_FIELDS} FROM chunks c"
                " JOIN documents d ON d.doc_key = c.doc_key WHERE c.key = ANY(%s)",
                (list(keys),),
            ).fetchall()
        return {int(row[0]): document_row(row[1:]) for row in rows}

    def body_terms(self, keys: Sequence[int]) -> dict[int, str]:
        """None kept: the postings table holds each term's counts, not the terms' order."""
        return {}

    @unavailable()
    def vectors(self) -> tuple[Keys, npt.NDArray[np.float32], Keys, Keys, list[str]]:
        """Every stored vector, the versions bounding its visibility (0: live), its tenant."""
        with self.connection() as connection:
            rows = connection.execute(
                f"SELECT key, {VECTOR_BYTES}, added, coalesce(removed, 0), tenant"
                " FROM chunks ORDER BY key"
            ).fetchall()
        keys = np.array([row[0] for row in rows], dtype=np.int64)
        added = np.array([row[2] for row in rows], dtype=np.int64)
        removed = np.array([row[3] for row in rows], dtype=np.int64)
        tenants = [str(row[4]) for row in rows]
        if not rows:
            return keys, np.zeros((0, 0), dtype=np.float32), added, removed, tenants
        return keys, vectors_read([row[1] for row in rows]), added, removed, tenants

    @unavailable()
    def filter_values(self, keys: Sequence[int], name: str) -> dict[int, Any]:
        with self.reading() as connection:
            rows = connection.execute(
                "SELECT key, filter_meta -> %s FROM chunks WHERE key = ANY(%s)", (name, list(keys))
            ).fetchall()
        return {int(key): value for key, value in rows}

    def content_hash(self, doc_id: str, tenant: str | None = None) -> str | None:
        value = self._one(
            "SELECT content_hash FROM documents WHERE tenant = %s AND doc_id = %s"
            " AND removed IS NULL",
            (tenant or "", doc_id),
        )
        return None if value is None else str(value)

    @unstorable("_meta.idempotencyKey")  # the client's string: U+0000 cannot be looked up
    def remembered(self, idempotency_key: str) -> str | None:
        value = self._one("SELECT result FROM idempotency WHERE key = %s", (idempotency_key,))
        return None if value is None else str(value)

    @unavailable()
    def vocabulary(self, tenant: str | None = None) -> list[tuple[str, int]]:
        with self.reading() as connection:
            rows = connection.execute(
                "SELECT word, df FROM vocabulary WHERE tenant = %s", (tenant or "",)
            ).fetchall()
        return [(str(word), int(df)) for word, df in rows]

    @unavailable()
    def live_documents(self, tenant: str | None = None) -> list[tuple[str, str | None, str]]:
        with self.reading() as connection:
            rows = connection.execute(
                "SELECT doc_id, uri, origin FROM documents WHERE tenant = %s AND removed IS NULL"
                " ORDER BY doc_id",
                (tenant or "",),
            ).fetchall()
        return [(str(doc_id), uri, str(origin)) for doc_id, uri, origin in rows]

    @unavailable()
    def document(self, doc_id: str, tenant: str | None = None) -> DocumentRow | None:
        with self.reading() as connection:
            row = connection.execute(
                f"SELECT {DOCUMENT_FIELDS} FROM documents"
                " WHERE tenant = %s AND doc_id = %s AND removed IS NULL",
                (tenant or "", doc_id),
            ).fetchone()
        return None if row is None else document_row(row)

    @unavailable()
    def document_chunks(self, doc_id: str, tenant: str | None = None) -> list[ChunkRow]:
        with self.reading() as connection:
            rows = connection.execute(
                f"SELECT {CHUNK_FIELDS} FROM chunks c JOIN documents d ON d.doc_key = c.doc_key"
                " WHERE c.tenant = %s AND c.doc_id = %s AND c.removed IS NULL ORDER BY c.idx",
                (tenant or "", doc_id),
            ).fetchall()
        return [chunk_row(row) for row in rows]

    @unavailable()
    def describe(self) -> dict[str, Any]:
        tenants = self._one("SELECT count(DISTINCT tenant) FROM documents WHERE removed IS NULL")
        size = self._one("SELECT pg_database_size(current_database())")
        return {"tenants": int(tenants), "size_bytes": int(size)}

    @unavailable()
    def live_texts(self, limit: int, tenant: str | None = None) -> list[str]:
        with self.reading() as connection:
            rows = connection.execute(
                "SELECT text FROM chunks WHERE removed IS NULL AND tenant = %s"
                " ORDER BY key DESC LIMIT %s",
                (tenant or "", limit),
            ).fetchall()
        return [str(row[0]) for row in rows]

    def document_frequency(self, word: str, tenant: str | None = None) -> int:
        value = self._one(
            "SELECT df FROM vocabulary WHERE tenant = %s AND word = %s", (tenant or "", word)
        )
        return 0 if value is None else int(value)

    def live_chunks(self) -> int:
        """Live chunks over all tenants, from the maintained totals (no table scan)."""
        value = self._one(
            "SELECT coalesce(sum(chunks), 0) FROM (SELECT DISTINCT ON (tenant) chunks"
            " FROM corpus_stats ORDER BY tenant, version DESC) AS latest"
        )
        return int(value)

    def count(self, tenant: str | None = None) -> tuple[int, int]:
        """(documents, chunks) of a tenant's live corpus."""
        scope = (tenant or "",)
        documents = self._one(
            "SELECT count(*) FROM documents WHERE removed IS NULL AND tenant = %s", scope
        )
        chunks = self._one(
            "SELECT count(*) FROM chunks WHERE removed IS NULL AND tenant = %s", scope
        )
        return int(documents), int(chunks)

    def ingested(self, tenant: str | None = None) -> int:
        return int(
            self._one(
                "SELECT count(*) FROM documents WHERE removed IS NULL AND tenant = %s"
                " AND origin = 'ingest'",
                (tenant or "",),
            )
        )
