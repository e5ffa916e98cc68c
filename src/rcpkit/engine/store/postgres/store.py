"""The scale-out store: one PostgreSQL (+ pgvector) shared by many stateless server processes.

Everything that defines an answer lives in the database: documents, chunks,
filter metadata (``jsonb``, GIN), vectors (``vector(d)``, HNSW), BM25 postings
and statistics, SPLADE postings, versions, settings (the cursor secret) and
idempotency results. So any process can serve any retained version (§7.7.1)
and accept any process's cursor (§10), and every read sees every process's
committed writes. The one thing held in the process is BM25's read side
(``_pg_mirror``): a cache of committed, versioned rows that follows the
database before any read of a version it has not seen, so it never decides an
answer the database would not give.

Commits are one transaction each and serialise on ``SELECT … FOR UPDATE`` of
the single ``versions`` row: version numbers strictly increase, and an upsert
by id (retire the live copy, insert the new one) cannot interleave with another
process's, so exactly one live copy of an id remains (§7.10).
"""

from __future__ import annotations

import math
import secrets
import threading
import weakref
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from rcpkit.engine.filters import Filter, compile_postgres
from rcpkit.engine.index import QueryIndex, SnapshotRead, SparseQuery
from rcpkit.engine.index._mirror import Mirror
from rcpkit.engine.index._mirror_cache import MirrorCache, cache_stamp
from rcpkit.engine.scoring.bm25 import query_weights, resolve_bm25, term_counts
from rcpkit.engine.store import deadline, migrations
from rcpkit.engine.store.base import (
    CHUNK_FIELDS,
    DOCUMENT_COLUMNS,
    DOCUMENT_FIELDS,
    JOINED_DOCUMENT_FIELDS,
    ChunkRow,
    CommitResult,
    DocumentRow,
    Idempotency,
    Keys,
    WriteBatch,
    chunk_row,
    document_row,
    document_values,
)
from rcpkit.engine.store.postgres.dense import (
    VECTOR_BYTES,
    HnswSettings,
    PostgresDenseSearch,
    ensure_vector_index,
    vectors_read,
)
from rcpkit.engine.store.postgres.errors import deadline_exceeded, psycopg, unavailable, unstorable
from rcpkit.engine.store.postgres.lexical import lexical_sql, named
from rcpkit.engine.store.postgres.rows import (
    Pending,
    add_counts,
    copy_binary,
    copy_rows,
    copy_text,
    draw_keys,
    escape_copy_text,
)
from rcpkit.engine.store.postgres.source import PostgresSource
from rcpkit.engine.store.tenant_purge import purge
from rcpkit.engine.store.tenant_versions import (
    Dialect,
    TenantVersions,
    collect_floors,
    latest_seq,
    record,
)
from rcpkit.engine.text.analysis import surface_words
from rcpkit.protocol.errors import ErrorCode, RCPError

__all__ = ["PostgresStore", "bound_by_deadline", "connect"]

_DOCUMENT_COLUMNS = ", ".join(("doc_key", *DOCUMENT_COLUMNS))
_DIALECT = Dialect("%s")
_CHUNK_COLUMNS = (
    'key, doc_key, tenant, doc_id, idx, start, "end", page, text, context, filter_meta,'
    " embedding, length, added"
)


def connect(url: str) -> Any:
    """An autocommit connection (psycopg's errors become ValueError for the CLI)."""
    driver = psycopg()
    try:
        return driver.connect(url, autocommit=True)
    except driver.Error as error:
        raise ValueError(f"cannot connect to the store: {error}") from None


class PostgresStore:
    """A store in a PostgreSQL database; thread-safe (a pool of checked connections, one writer).

    Connections come from a ``psycopg_pool`` pool that checks each one as it is
    handed out: after a database restart a request in flight then fails
    (``-32010``), and every later one gets a fresh connection instead of the
    dead one it would otherwise have found (issue 20). A request waiting for a
    connection waits at most its deadline (else ``pool_timeout``), then ``-32010``.
    """

    def __init__(
        self,
        url: str,
        *,
        migrate: bool = True,
        pool_size: int = 32,
        pool_timeout: float = 30.0,
        hnsw: HnswSettings | None = None,
        prepared_statements: bool = True,
        bm25: Mapping[str, float | None] | None = None,
        cache: Path | None = None,
    ) -> None:
        """``bm25``: the configured BM25 parameters (as ``SQLiteStore``'s); ``cache``: a
        local file for the mirror (``_mirror_cache``), checked against the database on load."""
        self.url = url
        self.hnsw = hnsw or HnswSettings()
        self.pool_timeout = pool_timeout
        self._local = threading.local()
        self._write_lock = threading.Lock()
        with connect(url) as first:  # refused: ValueError, for the CLI
            self.read_only = bool(first.execute("SELECT pg_is_in_recovery()").fetchone()[0])
            latest = migrations.MIGRATIONS[-1].version
            applied = migrations.applied_version(first)
            if applied < latest and migrate and not self.read_only:
                applied, _ = migrations.migrate(first)
        if applied != latest:
            raise ValueError(
                f"the database holds rcpkit schema {applied}, this rcpkit needs {latest}; "
                "run `rcpkit db migrate --store URL`"
            )
        self._pool = open_pool(url, pool_size, prepared_statements)
        # A store dropped without close() (an engine a caller forgot) closes its pool.
        weakref.finalize(self, self._pool.close)
        legacy = self.setting("bm25") is None and self.version > 0
        self.bm25 = resolve_bm25(self.setting_default, bm25, "in this database", legacy=legacy)
        self._cache: MirrorCache | None = None
        if cache is not None:
            # The database's identity (set once by whichever server came first; a
            # standby reads the primary's) stamps the file, as the embedded store's.
            identity = self.setting_default("dense.identity", secrets.token_hex(16))
            stamp = cache_stamp(identity, self.bm25.title_weight, self.bm25.body_weight)
            self._cache = MirrorCache(cache, stamp, vectors=False)
        # §15.6: each tenant's own version numbers (tenant_versions).
        self.tenancy = TenantVersions(self._rows, _DIALECT)
        # BM25's read side: committed rows in memory, following the database (_pg_mirror).
        self.index = QueryIndex(
            PostgresSource(self._pool),
            self._cache,
            self.bm25,
            reader=self._reading,
            fallback=self,
            learned_sparse=self,
        )
        self._mirror = self.index.mirror

    def _reading(self, mirror: Mirror, version: int | None) -> SnapshotRead:
        """The version read, resolved in the database (this thread's snapshot, if pinned).

        A mirror behind it follows the database first. A version below the mirror's
        floor may have lost rows to its compaction: SQL answers that one.
        """
        at = self.version if version is None else version
        snapshot = mirror.snapshot
        if snapshot.version < at:
            snapshot = mirror.sync()
        if at < snapshot.floor or snapshot.version < at:
            return SnapshotRead(None, at)
        return SnapshotRead(snapshot, at)

    @contextmanager
    def connection(self) -> Iterator[Any]:
        """This thread's connection: the one it already holds, else one from the pool.

        Nested uses on one thread share one connection, so a transaction opened
        by an outer use (a deadline, a pinned read) covers the inner statements.
        """
        held = getattr(self._local, "connection", None)
        if held is not None:
            yield held
            return
        left = deadline.remaining()
        if left is not None and left <= 0:
            raise RCPError(ErrorCode.TIMEOUT, "deadline exceeded", retryable=True)
        wait = self.pool_timeout if left is None else min(left, self.pool_timeout)
        with self._borrowed(wait, left is not None and left <= self.pool_timeout) as connection:
            self._local.connection = connection
            try:
                yield connection
            finally:
                self._local.connection = None

    @contextmanager
    def _borrowed(self, wait: float, by_deadline: bool) -> Iterator[Any]:
        """A pool connection; waiting out the request's deadline for one is -32014 (§13.1)."""
        from psycopg_pool import PoolTimeout

        try:
            connection = self._pool.getconn(timeout=wait)
        except PoolTimeout:
            if by_deadline:
                raise RCPError(ErrorCode.TIMEOUT, "deadline exceeded", retryable=True) from None
            raise
        try:
            yield connection
        finally:
            self._pool.putconn(connection)  # a broken one is replaced, an open transaction ends

    @contextmanager
    def reading(self) -> Iterator[Any]:
        """This thread's connection, its statements bounded by the request's deadline.

        §13.1: past the deadline the request is answered -32014 and its work must
        stop, SQL included. Under a :func:`deadline.deadline_scope` the statements
        run in one transaction with ``SET LOCAL statement_timeout`` of the time
        left; PostgreSQL cancels one still running then, which is -32014 here too.
        """
        with self.connection() as connection:
            if deadline.remaining() is None:
                yield connection
                return
            with deadline_exceeded(), connection.transaction():
                bound_by_deadline(connection)
                yield connection

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Every read on this thread until exit sees one snapshot (see ``store.snapshot``).

        Nested in another snapshot (a rewrite's inner retrieve) it is that one.
        """
        with unavailable(), self.connection() as connection:
            if connection.info.transaction_status != psycopg().pq.TransactionStatus.IDLE:
                yield
                return
            with connection.transaction():
                connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                yield

    @contextmanager
    def writing(self) -> Iterator[Any]:
        """A write transaction on this thread's connection, bounded by the request's deadline.

        For writes that need no version (the engine state: feedback, memories,
        trajectories). §13.1: past the deadline the transaction is cancelled and
        rolled back, so nothing of it is written, and the request is -32014.
        """
        with self.connection() as connection, deadline_exceeded(), connection.transaction():
            bound_by_deadline(connection)
            yield connection

    @unavailable()
    def _one(self, sql: str, params: Sequence[object] | dict[str, object] = ()) -> Any:
        with self.reading() as connection:
            row = connection.execute(sql, params).fetchone()
        return None if row is None else row[0]

    @unavailable()
    def _rows(self, sql: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        with self.reading() as connection:
            return list(connection.execute(sql, params).fetchall())

    @property
    def version(self) -> int:
        """The last committed version, read from the database (another process may commit)."""
        return int(self._one("SELECT version FROM versions"))

    @property
    def floor(self) -> int:
        return int(self._one("SELECT floor FROM versions"))

    # --- writes ---

    @contextmanager
    def _transaction(self) -> Iterator[tuple[Any, int, int]]:
        """A write transaction holding the versions row: (connection, version, floor)."""
        # §13.1: waiting for this process's writer, then for the versions row and every
        # statement of the write, all within the request's deadline; cut off, it rolls back.
        left = deadline.remaining()
        if not self._write_lock.acquire(timeout=-1 if left is None else max(0.0, left)):
            raise RCPError(ErrorCode.TIMEOUT, "deadline exceeded", retryable=True)
        try:
            with (
                deadline_exceeded(),
                self.connection() as connection,
                connection.transaction(),
            ):
                bound_by_deadline(connection)
                version, floor = connection.execute(
                    "SELECT version, floor FROM versions WHERE id = 1 FOR UPDATE"
                ).fetchone()
                yield connection, int(version), int(floor)
                # The request may have been answered -32014 while a statement still ran
                # within its (rounded-up) statement_timeout: then it must not commit.
                left = deadline.remaining()
                if left is not None and left <= 0:
                    raise RCPError(ErrorCode.TIMEOUT, "deadline exceeded", retryable=True)
        finally:
            self._write_lock.release()

    def commit(self, batch: WriteBatch, idempotency: Idempotency | None = None) -> CommitResult:
        """Apply ``batch`` atomically as the next version; older versions stay readable."""
        with unavailable(), unstorable("documents" if batch.documents else "ids"):
            return self._commit(batch, idempotency)

    def _commit(self, batch: WriteBatch, idempotency: Idempotency | None) -> CommitResult:
        tenant = batch.tenant or ""
        added: list[tuple[int, npt.NDArray[np.float32]]] = []
        with self._transaction() as (connection, previous, _):
            if idempotency is not None:
                # Checked under the versions lock: a retry that reached another process
                # while this one was embedding finds the first commit's result here.
                (found,) = connection.execute(
                    "SELECT max(result) FROM idempotency WHERE key = %s", (idempotency[0],)
                ).fetchone()
                if found is not None:
                    return CommitResult(previous, [], [], 0, str(found))
            version = previous + 1
            doc_ids = [document.doc_id for document, _ in batch.documents]
            removed, _, gone_texts, gone_tokens = self._retire(connection, tenant, doc_ids, version)
            deleted_keys, deleted, texts, tokens = self._retire(
                connection, tenant, batch.delete, version
            )
            removed += deleted_keys
            if not batch.documents and not removed and not deleted:
                # Nothing to write (an unchanged re-index, a delete of absent ids): no
                # version, so pinned snapshots and cursors are not aged for nothing.
                shown = latest_seq(_DIALECT, connection, tenant)
                self._remember(connection, idempotency, shown)
                return CommitResult(previous, [], [], 0, shown=shown)
            gone_texts += texts
            gone_tokens += tokens
            words: Counter[str] = Counter()
            for text in gone_texts:
                words.subtract(surface_words(text))
            pending = Pending()
            self._insert_documents(connection, tenant, batch, version, pending, added)
            for _, chunks in batch.documents:
                for chunk in chunks:
                    words.update(surface_words(chunk.text))
            new_tokens, new_chunks = pending.tokens, len(added)
            self._write_postings(connection, tenant, version, pending, removed)
            self._write_sparse(connection, batch, added)
            self._count(
                connection, tenant, version, new_chunks - len(removed), new_tokens - gone_tokens
            )
            self._count_words(connection, tenant, words)
            connection.execute("UPDATE versions SET version = %s WHERE id = 1", (version,))
            shown = record(_DIALECT, connection, tenant, version)
            self._remember(connection, idempotency, shown)
        return CommitResult(version, added, removed, deleted, shown=shown)

    @staticmethod
    def _remember(connection: Any, idempotency: Idempotency | None, version: int) -> None:
        if idempotency is None:
            return
        key, result = idempotency
        text = result(version) if callable(result) else result
        connection.execute(
            "INSERT INTO idempotency (key, result) VALUES (%s, %s)"
            " ON CONFLICT (key) DO UPDATE SET result = excluded.result,"
            " created = excluded.created",
            (key, text),
        )

    @staticmethod
    def _retire(
        connection: Any, tenant: str, doc_ids: Sequence[str], version: int
    ) -> tuple[list[int], int, list[str], int]:
        """Mark live documents and chunks removed at ``version``: keys, documents, texts, tokens."""
        ids = list(dict.fromkeys(doc_ids))
        if not ids:
            return [], 0, [], 0
        live = "tenant = %s AND doc_id = ANY(%s) AND removed IS NULL"
        rows = connection.execute(
            f"UPDATE chunks SET removed = %s WHERE {live} RETURNING key, text, length",
            (version, tenant, ids),
        ).fetchall()
        cursor = connection.execute(
            f"UPDATE documents SET removed = %s WHERE {live}", (version, tenant, ids)
        )
        keys = sorted(int(row[0]) for row in rows)
        return keys, cursor.rowcount, [row[1] for row in rows], sum(row[2] for row in rows)

    def _insert_documents(
        self,
        connection: Any,
        tenant: str,
        batch: WriteBatch,
        version: int,
        pending: Pending,
        added: list[tuple[int, npt.NDArray[np.float32]]],
    ) -> None:
        """COPY the batch's documents and chunks in, keys drawn from their sequences first."""
        doc_keys = draw_keys(connection, "documents_doc_key_seq", len(batch.documents))
        total = sum(len(chunks) for _, chunks in batch.documents)
        pending.keys = iter(draw_keys(connection, "chunks_key_seq", total))
        for (document, chunks), doc_key in zip(batch.documents, doc_keys, strict=True):
            pending.documents.append((doc_key, *document_values(tenant, document, version)))
            self._insert_chunks(tenant, document, doc_key, chunks, version, pending, added)
        copy_rows(connection, f"documents ({_DOCUMENT_COLUMNS})", pending.documents)
        copy_binary(connection, f"chunks ({_CHUNK_COLUMNS})", pending.chunks)

    @staticmethod
    def _insert_chunks(
        tenant: str,
        document: DocumentRow,
        doc_key: int,
        chunks: Sequence[Any],
        version: int,
        pending: Pending,
        added: list[tuple[int, npt.NDArray[np.float32]]],
    ) -> None:
        """One document's chunk rows and postings, queued for the batch's COPY."""
        # COPY text fields: the terms need no escaping (see _pg_rows), the tenant may.
        scope = f"\t{escape_copy_text(tenant)}\t"
        for chunk in chunks:
            key = next(pending.keys)
            vector = np.asarray(chunk.vector, dtype=np.float32)
            counts, length = term_counts(chunk.title_terms, chunk.body_terms)
            tail = f"\t{length}\t{version}\n"
            pending.postings += [
                f"{term}\t{key}{scope}{title}\t{body}{tail}"
                for term, (title, body) in counts.items()
            ]
            pending.terms.update(counts.keys())
            pending.tokens += length
            columns = chunk.row_values(doc_key, tenant, document.doc_id)
            pending.chunks.add(key, columns, vector, length, version)
            added.append((key, vector))

    @staticmethod
    def _write_postings(
        connection: Any, tenant: str, version: int, pending: Pending, removed: Sequence[int]
    ) -> None:
        """New postings in; per-tenant term frequencies follow (retired chunks count down)."""
        frequencies = pending.terms
        if removed:
            connection.execute(
                "UPDATE postings SET removed = %s WHERE key = ANY(%s)", (version, list(removed))
            )
            for term, count in connection.execute(
                "SELECT term, count(*) FROM postings WHERE key = ANY(%s) GROUP BY term",
                (list(removed),),
            ):
                frequencies[term] -= int(count)
        columns = "postings (term, key, tenant, title_tf, body_tf, length, added)"
        copy_text(connection, columns, pending.postings)
        add_counts(connection, "term_stats", "term", tenant, frequencies)

    @staticmethod
    def _write_sparse(connection: Any, batch: WriteBatch, added: Sequence[tuple[int, Any]]) -> None:
        chunks = [chunk for _, document_chunks in batch.documents for chunk in document_chunks]
        if not any(chunk.sparse is not None for chunk in chunks):
            return
        with connection.cursor().copy("COPY splade (key, term, weight) FROM STDIN") as copy:
            for (key, _), chunk in zip(added, chunks, strict=True):
                if chunk.sparse is not None:
                    terms, weights = chunk.sparse
                    for term, weight in zip(terms, weights, strict=True):
                        copy.write_row((key, int(term), float(weight)))

    @staticmethod
    def _count(connection: Any, tenant: str, version: int, chunks: int, tokens: int) -> None:
        """The tenant's live chunk and token totals as of ``version`` (BM25's N and avgdl)."""
        connection.execute(
            "INSERT INTO corpus_stats (tenant, version, chunks, tokens)"
            " SELECT %(tenant)s, %(version)s, coalesce(max(chunks), 0) + %(chunks)s,"
            " coalesce(max(tokens), 0) + %(tokens)s FROM (SELECT chunks, tokens FROM corpus_stats"
            " WHERE tenant = %(tenant)s ORDER BY version DESC LIMIT 1) AS previous",
            {"tenant": tenant, "version": version, "chunks": chunks, "tokens": tokens},
        )

    @staticmethod
    def _count_words(connection: Any, tenant: str, words: Counter[str]) -> None:
        # As in the embedded store: per tenant, so a suggestion never reveals another's words.
        add_counts(connection, "vocabulary", "word", tenant, words)

    # --- snapshots: retention and garbage collection ---

    @unavailable()
    def collect(self, retain: int) -> list[int]:
        """Drop rows no version among each tenant's last ``retain`` can see; their keys.

        §15.6: retention counts a tenant's own versions (``tenant_versions``); the
        ``floor`` column is the highest tenant floor, what the mirror follows.
        """
        with self._transaction() as (connection, _, floor):
            moved = collect_floors(_DIALECT, connection, retain)
            if not moved:
                return []
            keys: list[int] = []
            for tenant_floor in moved:
                scope = {"tenant": tenant_floor.tenant, "floor": tenant_floor.version}
                keys.extend(
                    int(row[0])
                    for row in connection.execute(
                        "DELETE FROM chunks WHERE tenant = %(tenant)s AND removed IS NOT NULL"
                        " AND removed <= %(floor)s RETURNING key",
                        scope,
                    )
                )
                connection.execute(
                    "DELETE FROM documents WHERE tenant = %(tenant)s AND removed IS NOT NULL"
                    " AND removed <= %(floor)s",
                    scope,
                )
                # Keep the tenant's newest totals at or below its floor: versions from the
                # floor on still read them.
                connection.execute(
                    "DELETE FROM corpus_stats AS old WHERE old.tenant = %(tenant)s"
                    " AND old.version < %(floor)s AND EXISTS ("
                    " SELECT 1 FROM corpus_stats AS newer WHERE newer.tenant = old.tenant"
                    " AND newer.version > old.version AND newer.version <= %(floor)s)",
                    scope,
                )
            if keys:
                connection.execute("DELETE FROM postings WHERE key = ANY(%s)", (keys,))
                connection.execute("DELETE FROM splade WHERE key = ANY(%s)", (keys,))
            mark = max([floor, *(tenant_floor.version for tenant_floor in moved)])
            connection.execute("UPDATE versions SET floor = %s WHERE id = 1", (mark,))
        return keys

    @unavailable()
    def purge_tenant(self, tenant: str, schemas: Sequence[str] = ()) -> dict[str, int]:
        """Delete every row of ``tenant`` and drop ``schemas`` (``tenant_purge``)."""
        with self._transaction() as (connection, _, _):
            return purge(_DIALECT, connection, tenant, postgres=True, schemas=schemas)

    @unavailable()
    def forget_idempotency(self, retention_seconds: float) -> int:
        """Drop idempotency keys recorded ``retention_seconds`` ago or earlier; returns how many.

        The database's clock dates and ages every key, so servers whose clocks disagree
        still keep a key the same time. No versions lock: a key may go while another
        process checks it, which is as if the repeat came after the retention.
        """
        with self.connection() as connection:
            cursor = connection.execute(
                "DELETE FROM idempotency WHERE created <= now() - make_interval(secs => %s)",
                (float(retention_seconds),),
            )
        return int(cursor.rowcount)

    # --- reads ---

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
    def live_keys(self, keys: Sequence[int]) -> set[int]:
        """Which of these chunk keys are live now (no commit has retired them)."""
        if not keys:
            return set()
        with self.reading() as connection:
            rows = connection.execute(
                "SELECT key FROM chunks WHERE key = ANY(%s) AND removed IS NULL", (list(keys),)
            ).fetchall()
        return {int(row[0]) for row in rows}

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

    def setting(self, name: str) -> str | None:
        value = self._one("SELECT value FROM settings WHERE name = %s", (name,))
        return None if value is None else str(value)

    @unavailable()
    def set_setting(self, name: str, value: str) -> None:
        with self.connection() as connection:
            connection.execute(
                "INSERT INTO settings (name, value) VALUES (%s, %s)"
                " ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                (name, value),
            )

    @unavailable()
    def setting_default(self, name: str, value: str) -> str:
        existing = self.setting(name)
        if existing is not None or self.read_only:
            return existing or value
        # A connection of its own, outside any snapshot this thread holds: in a
        # REPEATABLE READ snapshot the insert fails to serialise when another
        # request set the name first, and the snapshot would not see its value.
        with self._borrowed(self.pool_timeout, by_deadline=False) as connection:
            connection.execute(
                "INSERT INTO settings (name, value) VALUES (%s, %s) ON CONFLICT (name) DO NOTHING",
                (name, value),
            )
            row = connection.execute("SELECT value FROM settings WHERE name = %s", (name,))
            agreed = row.fetchone()
        return value if agreed is None else str(agreed[0])

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

    def close(self) -> None:
        if self._cache is not None:
            self._cache.close()
        self._pool.close()


def bound_by_deadline(connection: Any) -> None:
    """``SET LOCAL statement_timeout`` to the time the request's deadline leaves, if any."""
    left = deadline.remaining()
    if left is None:
        return
    if left <= 0:
        raise RCPError(ErrorCode.TIMEOUT, "deadline exceeded", retryable=True)
    milliseconds = str(max(1, math.ceil(left * 1000)))
    connection.execute("SELECT set_config('statement_timeout', %s, true)", (milliseconds,))


def open_pool(url: str, size: int, prepared_statements: bool = True) -> Any:
    """A pool of autocommit connections, each checked (``SELECT ''``) as it is handed out.

    Without ``prepared_statements`` nothing is prepared server-side
    (``prepare_threshold=None``): a transaction-mode pooler that cannot track
    them (pgbouncer < 1.21, or without ``max_prepared_statements``) hands each
    transaction another server connection, where a prepared name is unknown.
    """
    kwargs: dict[str, Any] = {"autocommit": True}
    if not prepared_statements:
        kwargs["prepare_threshold"] = None
    try:
        from psycopg_pool import ConnectionPool
    except ImportError as error:
        raise RuntimeError("install rcpkit[postgres] to use a postgres:// store") from error
    return ConnectionPool(
        url,
        min_size=1,
        max_size=max(1, size),
        kwargs=kwargs,
        check=ConnectionPool.check_connection,
        open=True,
        name="rcpkit",
    )
