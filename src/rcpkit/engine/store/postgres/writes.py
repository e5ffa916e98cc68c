"""A PostgreSQL store's writes: commits, retention and tenant purges.

Commits are one transaction each and serialise on ``SELECT … FOR UPDATE`` of
the single ``versions`` row: version numbers strictly increase, and an upsert
by id (retire the live copy, insert the new one) cannot interleave with another
process's, so exactly one live copy of an id remains (§7.10).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import numpy.typing as npt

from rcpkit.engine.scoring.bm25 import term_counts
from rcpkit.engine.store import deadline
from rcpkit.engine.store.base import (
    DOCUMENT_COLUMNS,
    CommitResult,
    DocumentRow,
    Idempotency,
    WriteBatch,
    document_values,
)
from rcpkit.engine.store.postgres.connections import DIALECT as _DIALECT
from rcpkit.engine.store.postgres.connections import Connections, bound_by_deadline
from rcpkit.engine.store.postgres.errors import deadline_exceeded, unavailable, unstorable
from rcpkit.engine.store.postgres.rows import (
    Pending,
    add_counts,
    copy_binary,
    copy_rows,
    copy_text,
    draw_keys,
    escape_copy_text,
)
from rcpkit.engine.store.tenant_purge import purge
from rcpkit.engine.store.tenant_versions import collect_floors, latest_seq, record
from rcpkit.engine.text.analysis import surface_words
from rcpkit.protocol.errors import ErrorCode, RCPError

__all__ = ["Writes"]

_DOCUMENT_COLUMNS = ", ".join(("doc_key", *DOCUMENT_COLUMNS))
_CHUNK_COLUMNS = (
    'key, doc_key, tenant, doc_id, idx, start, "end", page, text, context, filter_meta,'
    " embedding, length, added"
)


class Writes(Connections):
    """Commits (one transaction holding the versions row each), retention, purges."""

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
                    words.update(chunk.surface_words())
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
