"""The embedded store's writes: commits, retention and tenant purges.

Every write is one ``BEGIN IMMEDIATE`` transaction: a crash mid-batch leaves
the previous version intact, and a committed version survives a process crash
(``synchronous=FULL``). Versions are allocated inside that transaction from the
file, so several processes can write one index and never reuse a version.
"""

from __future__ import annotations

import sqlite3
import time
from collections import Counter
from collections.abc import Sequence
from itertools import chain

import numpy as np
import numpy.typing as npt

from rcpkit.engine.store.base import (
    DOCUMENT_COLUMNS,
    CommitResult,
    DocumentRow,
    Idempotency,
    NewChunk,
    WriteBatch,
    document_values,
    stored_json,
)
from rcpkit.engine.store.sqlite.file import (
    DIALECT,
    SQLiteFile,
    groups,
    stored_floor,
    stored_version,
)
from rcpkit.engine.store.tenant_purge import purge
from rcpkit.engine.store.tenant_versions import collect_floors, latest_seq, record
from rcpkit.engine.text.analysis import surface_words

__all__ = ["Writes"]

_TEXT = DOCUMENT_COLUMNS.index("text")


def _last_key(connection: sqlite3.Connection, table: str) -> int:
    """The highest key ``table`` ever used (AUTOINCREMENT's ``sqlite_sequence``)."""
    row = connection.execute("SELECT seq FROM sqlite_sequence WHERE name = ?", (table,)).fetchone()
    return 0 if row is None else int(row[0])


def _document_values(
    tenant: str, document: DocumentRow, chunks: Sequence[NewChunk], version: int
) -> list[object]:
    values = list(document_values(tenant, document, version))
    if len(chunks) == 1 and chunks[0].text == document.text:
        # The text its only chunk holds is not stored again (issue 51.5: 400 B a
        # chunk): '' says "the chunk's", and ``reads`` reads the chunk's back.
        values[_TEXT] = ""
    return values


class Writes(SQLiteFile):
    """Commits (rows retired, never updated in place), retention, purges."""

    def commit(self, batch: WriteBatch, idempotency: Idempotency | None = None) -> CommitResult:
        """Apply ``batch`` atomically as a new version; older versions stay readable.

        Rows are never updated in place: a replaced or deleted document and its
        chunks get ``removed = version``, so a reader pinned to an older version
        still sees them until garbage collection (§7.7.1 snapshots).
        """
        added: list[tuple[int, npt.NDArray[np.float32]]] = []
        with self._transaction() as connection:
            if idempotency is not None:
                # Under the write lock: a concurrent request with the same key got there first.
                found = connection.execute(
                    "SELECT result FROM idempotency WHERE key = ?", (idempotency[0],)
                ).fetchone()
                if found is not None:
                    return CommitResult(stored_version(connection), [], [], 0, str(found[0]))
            # Allocated in the file under the write lock: strictly increasing and never
            # reused, whichever process commits (issue 14).
            version = stored_version(connection) + 1
            tenant = batch.tenant or ""
            doc_ids = [document.doc_id for document, _ in batch.documents]
            removed, _ = self._retire(connection, tenant, doc_ids, version)
            gone, deleted = self._retire(connection, tenant, batch.delete, version)
            removed.extend(gone)
            if not batch.documents and not removed and not deleted:
                # Nothing to write (an unchanged re-index, a delete of absent ids): no
                # version, so pinned snapshots and cursors are not aged for nothing.
                version -= 1
                shown = latest_seq(DIALECT, connection, tenant)
                if idempotency is not None:
                    self._remember(connection, idempotency, shown)
                return CommitResult(version, [], [], deleted, shown=shown)
            frequencies: Counter[str] = Counter()
            for key_group in groups(removed):
                marks = ",".join("?" * len(key_group))
                for (text,) in connection.execute(
                    f"SELECT text FROM chunks WHERE key IN ({marks})", key_group
                ):
                    frequencies.subtract(surface_words(text))
            added = self._insert(connection, tenant, batch, version)
            # One count over every new chunk's words (a call per chunk was 10 % of it).
            frequencies.update(
                chain.from_iterable(
                    chunk.surface_words() for _, chunks in batch.documents for chunk in chunks
                )
            )
            self._count_words(connection, tenant, frequencies)
            connection.execute(
                "INSERT OR REPLACE INTO settings (name, value) VALUES ('version', ?)", (version,)
            )
            shown = record(DIALECT, connection, tenant, version)
            if idempotency is not None:
                self._remember(connection, idempotency, shown)
        if getattr(self._local, "pinned", None) is None:  # a pinned thread reads its snapshot
            self._mirror.sync()
        return CommitResult(version, added, removed, deleted, shown=shown)

    @staticmethod
    def _remember(connection: sqlite3.Connection, idempotency: Idempotency, version: int) -> None:
        key, result = idempotency
        text = result(version) if callable(result) else result
        connection.execute(
            "INSERT OR REPLACE INTO idempotency (key, result, created) VALUES (?, ?, ?)",
            (key, text, time.time()),
        )

    @staticmethod
    def _count_words(
        connection: sqlite3.Connection, tenant: str, frequencies: Counter[str]
    ) -> None:
        # The live corpus's vocabulary with document (chunk) frequencies, for
        # query rewriting; retired chunks count down, new ones up. Per tenant:
        # a spelling suggestion must not reveal another tenant's words.
        changes = [(tenant, word, delta) for word, delta in frequencies.items() if delta]
        connection.executemany(
            "INSERT INTO vocabulary (tenant, word, df) VALUES (?, ?, ?)"
            " ON CONFLICT (tenant, word) DO UPDATE SET df = df + excluded.df",
            changes,
        )
        # Only a word counted down can reach 0 (every other df stays above it): deleting
        # those alone spares a scan of the whole vocabulary per commit (issue 51.5).
        fallen = [(tenant, word) for word, delta in frequencies.items() if delta < 0]
        connection.executemany(
            "DELETE FROM vocabulary WHERE tenant = ? AND word = ? AND df <= 0", fallen
        )

    def _retire(
        self, connection: sqlite3.Connection, tenant: str, doc_ids: Sequence[str], version: int
    ) -> tuple[list[int], int]:
        """Mark live documents and their chunks removed at ``version``."""
        keys: list[int] = []
        retired = 0
        for group in groups(list(dict.fromkeys(doc_ids))):
            marks = ",".join("?" * len(group))
            live = f"tenant = ? AND doc_id IN ({marks}) AND removed IS NULL"
            scope = [tenant, *group]
            cursor = connection.execute(
                f"UPDATE documents SET removed = ? WHERE {live}", [version, *scope]
            )
            if not cursor.rowcount:
                continue  # no live document, so no live chunk: an add of new ids reads no more
            retired += cursor.rowcount
            rows = connection.execute(f"SELECT key FROM chunks WHERE {live}", scope).fetchall()
            keys.extend(row[0] for row in rows)
            connection.execute(f"UPDATE chunks SET removed = ? WHERE {live}", [version, *scope])
        return keys, retired

    def _insert(
        self, connection: sqlite3.Connection, tenant: str, batch: WriteBatch, version: int
    ) -> list[tuple[int, npt.NDArray[np.float32]]]:
        """The batch's documents, chunks and FTS rows, one ``executemany`` per table.

        Keys are handed out here, past the highest ever used (``sqlite_sequence``,
        which an explicit key above it moves on): under the write transaction no other
        writer takes one, and AUTOINCREMENT never reuses a key (issue 51.5: a statement
        per row was a quarter of an add).
        """
        doc_key = _last_key(connection, "documents")
        key = _last_key(connection, "chunks")
        documents: list[tuple[object, ...]] = []
        rows: list[tuple[object, ...]] = []
        terms: list[tuple[int, str, str]] = []
        sparse: list[tuple[int, int, float]] = []
        added: list[tuple[int, npt.NDArray[np.float32]]] = []
        meta_of, meta = None, ""
        for document, chunks in batch.documents:
            doc_key += 1
            documents.append((doc_key, *_document_values(tenant, document, chunks, version)))
            for chunk in chunks:
                key += 1
                vector = np.ascontiguousarray(chunk.vector, dtype="<f4")
                if chunk.filter_meta is not meta_of:  # a document's chunks share theirs
                    meta_of, meta = chunk.filter_meta, stored_json(chunk.filter_meta)
                own = chunk.row_values(doc_key, tenant, document.doc_id, meta)
                rows.append((key, *own, vector.tobytes(), version))
                terms.append((key, chunk.title_terms, chunk.body_terms))
                if chunk.sparse is not None:
                    pairs = zip(*chunk.sparse, strict=True)
                    sparse.extend((key, int(t), float(w)) for t, w in pairs)
                added.append((key, vector.astype(np.float32)))
        connection.executemany(
            f"INSERT INTO documents (doc_key, {', '.join(DOCUMENT_COLUMNS)})"
            f" VALUES ({', '.join('?' * (len(DOCUMENT_COLUMNS) + 1))})",
            documents,
        )
        connection.executemany(
            'INSERT INTO chunks (key, doc_key, tenant, doc_id, idx, start, "end", page, text,'
            " context, filter_meta, vector, added) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        connection.executemany(
            "INSERT INTO chunks_fts (rowid, title, body) VALUES (?, ?, ?)", terms
        )
        connection.executemany("INSERT INTO splade (key, term, weight) VALUES (?, ?, ?)", sparse)
        return added

    def collect(self, retain: int) -> list[int]:
        """Drop rows no version among each tenant's last ``retain`` can see; their keys.

        §15.6: retention counts a tenant's own versions (``tenant_versions``), so
        another tenant's writes never expire its pins and cursors. The ``floor``
        setting is the highest tenant floor: it rises whenever rows go, which is
        what the mirror follows.
        """
        with self._transaction() as connection:
            moved = collect_floors(DIALECT, connection, retain)
            if not moved:
                return []
            keys: list[int] = []
            for floor in moved:
                keys.extend(
                    row[0]
                    for row in connection.execute(
                        "SELECT key FROM chunks WHERE tenant = ? AND removed IS NOT NULL"
                        " AND removed <= ?",
                        (floor.tenant, floor.version),
                    )
                )
            for group in groups(keys):
                marks = ",".join("?" * len(group))
                connection.execute(f"DELETE FROM chunks_fts WHERE rowid IN ({marks})", group)
                connection.execute(f"DELETE FROM splade WHERE key IN ({marks})", group)
                connection.execute(f"DELETE FROM chunks WHERE key IN ({marks})", group)
            for floor in moved:
                connection.execute(
                    "DELETE FROM documents WHERE tenant = ? AND removed IS NOT NULL"
                    " AND removed <= ?",
                    (floor.tenant, floor.version),
                )
            mark = max([stored_floor(connection), *(floor.version for floor in moved)])
            connection.execute(
                "INSERT OR REPLACE INTO settings (name, value) VALUES ('floor', ?)", (mark,)
            )
        return keys

    def purge_tenant(self, tenant: str, schemas: Sequence[str] = ()) -> dict[str, int]:
        """Delete every row of ``tenant`` (``tenant_purge``); rows deleted per table."""
        with self._transaction() as connection:
            return purge(DIALECT, connection, tenant, postgres=False)

    def forget_idempotency(self, retention_seconds: float) -> int:
        """Drop idempotency keys recorded ``retention_seconds`` ago or earlier; returns how many."""
        cutoff = time.time() - retention_seconds
        with self._transaction() as connection:
            return connection.execute(
                "DELETE FROM idempotency WHERE created <= ?", (cutoff,)
            ).rowcount
