"""The embedded store: one SQLite file (WAL) is the system of record.

Why stdlib ``sqlite3`` and not ``apsw``: FTS5 and JSON1 are compiled into the
stock module here, so no loadable extension is needed. FTS5 keeps the analysed
title and body of every chunk (its content table); queries do not run through
it: every read but SPLADE's goes to the process's in-memory mirror of this
file (``_mirror``: BM25 postings with a pruning top-k, filter columns, the
vector matrix), kept current with every version any process commits, and
saved beside the file (``index.mirror``, ``_mirror_cache``) so that a new
process maps it back and reads only the newer rows instead of rebuilding.

Every write is one ``BEGIN IMMEDIATE`` transaction: a crash mid-batch leaves
the previous version intact, and a committed version survives a process crash
(``synchronous=FULL``). Versions are allocated inside that transaction from the
file, so several processes can write one index and never reuse a version.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from rcpkit.engine.filters import Filter, compile_sqlite
from rcpkit.engine.index import QueryIndex, SnapshotRead, SparseQuery
from rcpkit.engine.index._mirror import Mirror, Snapshot
from rcpkit.engine.index._mirror_cache import MirrorCache, cache_stamp
from rcpkit.engine.index.dense import DensePolicy, LocalDenseSearch
from rcpkit.engine.scoring.bm25 import resolve_bm25
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
    NewChunk,
    WriteBatch,
    chunk_row,
    document_row,
    document_values,
)
from rcpkit.engine.store.sqlite.checks import check_index_file
from rcpkit.engine.store.sqlite.source import SQLiteSource
from rcpkit.engine.store.tenant_purge import purge
from rcpkit.engine.store.tenant_versions import (
    SCHEMA as TENANT_SCHEMA,
)
from rcpkit.engine.store.tenant_versions import (
    Dialect,
    TenantVersions,
    backfill,
    collect_floors,
    latest_seq,
    record,
)
from rcpkit.engine.text.analysis import surface_words
from rcpkit.protocol.errors import ErrorCode, RCPError

__all__ = ["SQLiteStore"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS settings (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    doc_key INTEGER PRIMARY KEY AUTOINCREMENT, tenant TEXT NOT NULL, doc_id TEXT NOT NULL,
    title TEXT, uri TEXT, source TEXT NOT NULL,
    modality TEXT NOT NULL, meta TEXT NOT NULL, content_hash TEXT NOT NULL,
    text TEXT NOT NULL, pages TEXT, origin TEXT NOT NULL,
    added INTEGER NOT NULL, removed INTEGER
);
CREATE UNIQUE INDEX IF NOT EXISTS live_documents ON documents (tenant, doc_id)
    WHERE removed IS NULL;
CREATE TABLE IF NOT EXISTS chunks (
    key INTEGER PRIMARY KEY AUTOINCREMENT,
    doc_key INTEGER NOT NULL REFERENCES documents(doc_key), tenant TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    idx INTEGER NOT NULL, start INTEGER NOT NULL, "end" INTEGER NOT NULL, page INTEGER,
    text TEXT NOT NULL, context TEXT, filter_meta TEXT NOT NULL, vector BLOB NOT NULL,
    added INTEGER NOT NULL, removed INTEGER
);
CREATE INDEX IF NOT EXISTS live_chunks ON chunks (tenant, doc_id) WHERE removed IS NULL;
CREATE INDEX IF NOT EXISTS removed_chunks ON chunks (removed) WHERE removed IS NOT NULL;
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts
    USING fts5(title, body, tokenize = 'unicode61 remove_diacritics 0');
CREATE TABLE IF NOT EXISTS splade (
    key INTEGER NOT NULL, term INTEGER NOT NULL, weight REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS splade_terms ON splade (term, key);
-- created: when the key was recorded (Unix seconds), so keys past their retention go.
CREATE TABLE IF NOT EXISTS idempotency (
    key TEXT PRIMARY KEY, result TEXT NOT NULL, created REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS idempotency_created ON idempotency (created);
CREATE TABLE IF NOT EXISTS vocabulary (
    tenant TEXT NOT NULL, word TEXT NOT NULL, df INTEGER NOT NULL, PRIMARY KEY (tenant, word)
);
"""

SCHEMA_VERSION = 4  # PRAGMA user_version of the layout below
_IN_BATCH = 500  # bound on `IN (?, …)` parameters per statement
_DIALECT = Dialect("?")


class SQLiteStore:
    """A store in one SQLite file; thread-safe (one writer, a connection per reader thread)."""

    def __init__(
        self,
        path: Path | str,
        cache: bool = True,
        *,
        bm25: Mapping[str, float | None] | None = None,
        create: bool = True,
    ) -> None:
        """``cache``: keep the mirror in ``<file>.mirror`` beside the file (not ``:memory:``).

        ``bm25``: the configured BM25 parameters (`index.bm25.BM25` fields; None or an
        absent key: the index's own, or the defaults for a new index). ``create``: a
        missing or empty file becomes a new index; else it is an error (``NotAnIndex``).
        A file that holds anything but an rcpkit index is refused either way, before
        anything is written to it or to its mirror (``checks``).
        """
        self.path = Path(path)
        if str(path) != ":memory:":
            check_index_file(self.path, create=create)
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._write_lock = threading.Lock()
        self._local = threading.local()
        self._writer = self._connect()
        self._check_schema()
        self._create_schema()
        # §15.6: each tenant's own version numbers (tenant_versions).
        self.tenancy = TenantVersions(
            lambda sql, params: self._reader.execute(sql, params).fetchall(), _DIALECT
        )
        if (
            self.setting("version") is not None
            and not self._writer.execute("SELECT 1 FROM tenant_versions LIMIT 1").fetchone()
        ):
            with self._transaction() as connection:
                backfill(_DIALECT, connection, _stored_version(connection))
        legacy = self.setting("bm25") is None and self.setting("version") is not None
        self.bm25 = resolve_bm25(self.setting_default, bm25, self.path, legacy=legacy)
        self._cache: MirrorCache | None = None
        if cache and str(path) != ":memory:":
            stamp = cache_stamp(self._identity(), self.bm25.title_weight, self.bm25.body_weight)
            self._cache = MirrorCache(self.path.with_suffix(".mirror"), stamp)
        # What queries read: postings, filter columns, vectors; follows the file.
        self.index = QueryIndex(
            SQLiteSource(lambda: self._reader),
            self._cache,
            self.bm25,
            reader=self._reading,
            learned_sparse=self,
        )
        self._mirror = self.index.mirror

    def _identity(self) -> str:
        return self.setting_default("dense.identity", secrets.token_hex(16))

    def _create_schema(self) -> None:
        """The tables this layout adds; in one transaction when the file lacks any, so
        that a process creating the index beside this one (`serve --create --workers N`)
        sees no table or all of them and the layout's number, never a few (``checks``
        refuses a few, ``_check_schema`` tables without the number)."""
        script = f"{_SCHEMA}{TENANT_SCHEMA}PRAGMA user_version = {SCHEMA_VERSION};"
        names = {name for (name,) in self._writer.execute("SELECT name FROM sqlite_master")}
        if not {"settings", "documents", "chunks", "tenant_versions"} <= names:
            script = f"BEGIN IMMEDIATE; {script} COMMIT;"
        self._writer.executescript(script)

    def _check_schema(self) -> None:
        (version,) = self._writer.execute("PRAGMA user_version").fetchone()
        tables = self._writer.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        if tables and version == 3:
            # Layout 4 dates idempotency keys. Keys of unknown age count from now: each
            # keeps a full retention after the upgrade, so a retry in flight is still safe.
            with self._transaction() as connection:
                connection.execute(
                    "ALTER TABLE idempotency ADD COLUMN created REAL NOT NULL DEFAULT 0"
                )
                connection.execute("UPDATE idempotency SET created = ?", (time.time(),))
                connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            return
        if tables and version != SCHEMA_VERSION:
            raise ValueError(
                f"{self.path} holds an index of layout {version}, this rcpkit reads layout "
                f"{SCHEMA_VERSION}; re-index into a new folder"
            )

    def _connect(self) -> sqlite3.Connection:
        connection = sqlite3.connect(
            self.path, isolation_level=None, check_same_thread=False, timeout=30
        )
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("PRAGMA synchronous = FULL")
        connection.execute("PRAGMA foreign_keys = ON")
        return connection

    @property
    def _reader(self) -> sqlite3.Connection:
        connection: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if connection is None:
            connection = self._connect()
            self._local.connection = connection
        return connection

    @property
    def version(self) -> int:
        """The last committed index version, whichever process committed it (issue 14)."""
        return self._synced().version

    def _synced(self) -> Snapshot:
        """The mirror snapshot this thread reads: its pinned one, else the latest."""
        pinned: _Pinned | None = getattr(self._local, "pinned", None)
        return self._mirror.sync() if pinned is None else pinned.mirror

    def _reading(self, mirror: Mirror, version: int | None) -> SnapshotRead:
        """What the query index reads on this thread: its pinned snapshot, else the latest."""
        return SnapshotRead(self._synced(), version)

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Every read on this thread until exit sees one snapshot (see ``store.snapshot``).

        Two things are read: the in-memory mirror (BM25, filters, vectors) and the
        file (chunk text, SPLADE, the floor). The mirror snapshot published last is
        pinned with the dense state published with it, then one read transaction
        opens on this thread's connection (its WAL snapshot starts at its first
        read, the floor). The mirror serves every version from its floor to its
        version (a reload after garbage collection drops only rows retired at or
        below its floor), the file every version from the floor it read: the
        versions servable are the floor read to the mirror's version. Should a
        collect between the two have raised the floor past the mirror's version,
        both are taken again. Nested in another snapshot, it is that one.
        """
        if getattr(self._local, "pinned", None) is not None:
            yield
            return
        connection = self._reader
        for _ in range(3):
            self._mirror.sync()
            mirror, dense = self._mirror.pinned()
            connection.execute("BEGIN")
            try:
                floor = _stored_floor(connection)  # the transaction's WAL snapshot starts here
            except BaseException:
                connection.execute("COMMIT")
                raise
            if floor <= mirror.version:
                break
            connection.execute("COMMIT")
        else:
            raise RCPError(
                ErrorCode.BACKEND_UNAVAILABLE,
                "the index was collected while this request read it; retry",
                retryable=True,
            )
        self._local.pinned = _Pinned(mirror, max(floor, mirror.floor))
        try:
            index = self._mirror.dense
            if index is None or dense is None:
                yield
            else:
                with index.pinned(dense):
                    yield
        finally:
            self._local.pinned = None
            connection.execute("COMMIT")

    # --- writes ---

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._write_lock:
            connection = self._writer
            connection.execute("BEGIN IMMEDIATE")
            try:
                yield connection
            except BaseException:
                connection.execute("ROLLBACK")
                raise
            connection.execute("COMMIT")

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
                    return CommitResult(_stored_version(connection), [], [], 0, str(found[0]))
            # Allocated in the file under the write lock: strictly increasing and never
            # reused, whichever process commits (issue 14).
            version = _stored_version(connection) + 1
            tenant = batch.tenant or ""
            doc_ids = [document.doc_id for document, _ in batch.documents]
            removed, _ = self._retire(connection, tenant, doc_ids, version)
            gone, deleted = self._retire(connection, tenant, batch.delete, version)
            removed.extend(gone)
            if not batch.documents and not removed and not deleted:
                # Nothing to write (an unchanged re-index, a delete of absent ids): no
                # version, so pinned snapshots and cursors are not aged for nothing.
                version -= 1
                shown = latest_seq(_DIALECT, connection, tenant)
                if idempotency is not None:
                    self._remember(connection, idempotency, shown)
                return CommitResult(version, [], [], deleted, shown=shown)
            frequencies: Counter[str] = Counter()
            for key_group in _groups(removed):
                marks = ",".join("?" * len(key_group))
                for (text,) in connection.execute(
                    f"SELECT text FROM chunks WHERE key IN ({marks})", key_group
                ):
                    frequencies.subtract(surface_words(text))
            for document, chunks in batch.documents:
                doc_key = self._insert_document(connection, tenant, document, version)
                added.extend(
                    self._insert_chunks(connection, tenant, document, doc_key, chunks, version)
                )
                for chunk in chunks:
                    frequencies.update(surface_words(chunk.text))
            self._count_words(connection, tenant, frequencies)
            connection.execute(
                "INSERT OR REPLACE INTO settings (name, value) VALUES ('version', ?)", (version,)
            )
            shown = record(_DIALECT, connection, tenant, version)
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
        connection.execute("DELETE FROM vocabulary WHERE df <= 0")

    def vocabulary(self, tenant: str | None = None) -> list[tuple[str, int]]:
        """Every word of a tenant's live corpus with its chunk frequency."""
        rows = self._reader.execute(
            "SELECT word, df FROM vocabulary WHERE tenant = ?", (tenant or "",)
        )
        return [(str(word), int(df)) for word, df in rows]

    def live_texts(self, limit: int, tenant: str | None = None) -> list[str]:
        """Texts of a tenant's live chunks, newest first (what a global memory is built over)."""
        rows = self._reader.execute(
            "SELECT text FROM chunks WHERE removed IS NULL AND tenant = ? ORDER BY key DESC"
            " LIMIT ?",
            (tenant or "", limit),
        )
        return [str(row[0]) for row in rows]

    def document_frequency(self, word: str, tenant: str | None = None) -> int:
        row = self._reader.execute(
            "SELECT df FROM vocabulary WHERE tenant = ? AND word = ?", (tenant or "", word)
        ).fetchone()
        return 0 if row is None else int(row[0])

    def _retire(
        self, connection: sqlite3.Connection, tenant: str, doc_ids: Sequence[str], version: int
    ) -> tuple[list[int], int]:
        """Mark live documents and their chunks removed at ``version``."""
        keys: list[int] = []
        retired = 0
        for group in _groups(list(dict.fromkeys(doc_ids))):
            marks = ",".join("?" * len(group))
            live = f"tenant = ? AND doc_id IN ({marks}) AND removed IS NULL"
            scope = [tenant, *group]
            rows = connection.execute(f"SELECT key FROM chunks WHERE {live}", scope).fetchall()
            keys.extend(row[0] for row in rows)
            connection.execute(f"UPDATE chunks SET removed = ? WHERE {live}", [version, *scope])
            cursor = connection.execute(
                f"UPDATE documents SET removed = ? WHERE {live}", [version, *scope]
            )
            retired += cursor.rowcount
        return keys, retired

    def _insert_document(
        self, connection: sqlite3.Connection, tenant: str, document: DocumentRow, version: int
    ) -> int:
        cursor = connection.execute(
            f"INSERT INTO documents ({', '.join(DOCUMENT_COLUMNS)})"
            f" VALUES ({', '.join('?' * len(DOCUMENT_COLUMNS))})",
            document_values(tenant, document, version),
        )
        return int(cursor.lastrowid or 0)

    def _insert_chunks(
        self,
        connection: sqlite3.Connection,
        tenant: str,
        document: DocumentRow,
        doc_key: int,
        chunks: Sequence[NewChunk],
        version: int,
    ) -> list[tuple[int, npt.NDArray[np.float32]]]:
        added = []
        for chunk in chunks:
            vector = np.ascontiguousarray(chunk.vector, dtype="<f4")
            cursor = connection.execute(
                'INSERT INTO chunks (doc_key, tenant, doc_id, idx, start, "end", page, text,'
                " context, filter_meta, vector, added) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (*chunk.row_values(doc_key, tenant, document.doc_id), vector.tobytes(), version),
            )
            key = int(cursor.lastrowid or 0)
            connection.execute(
                "INSERT INTO chunks_fts (rowid, title, body) VALUES (?, ?, ?)",
                (key, chunk.title_terms, chunk.body_terms),
            )
            if chunk.sparse is not None:
                terms, weights = chunk.sparse
                connection.executemany(
                    "INSERT INTO splade (key, term, weight) VALUES (?, ?, ?)",
                    [(key, int(t), float(w)) for t, w in zip(terms, weights, strict=True)],
                )
            added.append((key, vector.astype(np.float32)))
        return added

    # --- snapshots: retention and garbage collection ---

    @property
    def floor(self) -> int:
        """The oldest version still servable; older ones were garbage-collected."""
        pinned: _Pinned | None = getattr(self._local, "pinned", None)
        if pinned is not None:
            return pinned.floor
        return int(self.setting("floor") or 0)

    def collect(self, retain: int) -> list[int]:
        """Drop rows no version among each tenant's last ``retain`` can see; their keys.

        §15.6: retention counts a tenant's own versions (``tenant_versions``), so
        another tenant's writes never expire its pins and cursors. The ``floor``
        setting is the highest tenant floor: it rises whenever rows go, which is
        what the mirror follows.
        """
        with self._transaction() as connection:
            moved = collect_floors(_DIALECT, connection, retain)
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
            for group in _groups(keys):
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
            mark = max([_stored_floor(connection), *(floor.version for floor in moved)])
            connection.execute(
                "INSERT OR REPLACE INTO settings (name, value) VALUES ('floor', ?)", (mark,)
            )
        return keys

    def purge_tenant(self, tenant: str, schemas: Sequence[str] = ()) -> dict[str, int]:
        """Delete every row of ``tenant`` (``tenant_purge``); rows deleted per table."""
        with self._transaction() as connection:
            return purge(_DIALECT, connection, tenant, postgres=False)

    def forget_idempotency(self, retention_seconds: float) -> int:
        """Drop idempotency keys recorded ``retention_seconds`` ago or earlier; returns how many."""
        cutoff = time.time() - retention_seconds
        with self._transaction() as connection:
            return connection.execute(
                "DELETE FROM idempotency WHERE created <= ?", (cutoff,)
            ).rowcount

    # --- reads ---

    @staticmethod
    def _visible(version: int | None, tenant: str | None) -> tuple[str, list[object]]:
        """Chunks a reader of ``tenant`` at ``version`` (None: latest) may see."""
        if version is None:
            return "chunks.tenant = ? AND chunks.removed IS NULL", [tenant or ""]
        return (
            "chunks.tenant = ? AND chunks.added <= ?"
            " AND (chunks.removed IS NULL OR chunks.removed > ?)",
            [tenant or "", version, version],
        )

    @staticmethod
    def _where(filter: Filter | None) -> tuple[str | None, list[object]]:
        if filter is None:
            return None, []
        return compile_sqlite(filter, column="filter_meta")  # §8, §15.4: bound parameters

    def learned_sparse_sql(self, query: SparseQuery) -> list[tuple[int, float]]:
        """SPLADE recall in SQL (``QueryIndex.learned_sparse``: the weights are not mirrored)."""
        where, params = self._where(query.filter)
        # Always the exact version: the file may already hold a newer one (§7.7.1).
        at = self._synced().version if query.version is None else query.version
        visible, visible_params = self._visible(at, query.tenant)
        pairs = ",".join("(?, ?)" for _ in query.terms)
        sql = (
            f"WITH q(term, weight) AS (VALUES {pairs})"
            " SELECT s.key, sum(s.weight * q.weight) AS score FROM q"
            " JOIN splade AS s ON s.term = q.term JOIN chunks ON chunks.key = s.key"
            f" WHERE {visible}"
        )
        arguments: list[object] = [
            v for pair in zip(query.terms, query.weights, strict=True) for v in pair
        ]
        arguments.extend(visible_params)
        if where:
            sql += " AND " + where
            arguments.extend(params)
        sql += " GROUP BY s.key ORDER BY score DESC, s.key LIMIT ?"
        arguments.append(query.limit)
        rows = self._reader.execute(sql, arguments).fetchall()
        return [(int(key), float(score)) for key, score in rows]

    def fetch(self, keys: Sequence[int]) -> dict[int, ChunkRow]:
        """Chunks by key, whatever their version (a pinned reader may need old ones)."""
        found: dict[int, ChunkRow] = {}
        for group in _groups(list(keys)):
            marks = ",".join("?" * len(group))
            rows = self._reader.execute(
                f"SELECT {CHUNK_FIELDS} FROM chunks c JOIN documents d ON d.doc_key = c.doc_key"
                f" WHERE c.key IN ({marks})",
                group,
            )
            found.update((int(row[0]), chunk_row(row)) for row in rows)
        return found

    def documents_of(self, keys: Sequence[int]) -> dict[int, DocumentRow]:
        found: dict[int, DocumentRow] = {}
        for group in _groups(list(keys)):
            marks = ",".join("?" * len(group))
            rows = self._reader.execute(
                f"SELECT c.key, {JOINED_DOCUMENT_FIELDS} FROM chunks c"
                f" JOIN documents d ON d.doc_key = c.doc_key WHERE c.key IN ({marks})",
                group,
            )
            found.update((int(row[0]), document_row(row[1:])) for row in rows)
        return found

    def body_terms(self, keys: Sequence[int]) -> dict[int, str]:
        """The FTS table's body column (what the indexer analysed), by key."""
        found: dict[int, str] = {}
        for group in _groups(list(keys)):
            marks = ",".join("?" * len(group))
            rows = self._reader.execute(
                f"SELECT id, c1 FROM chunks_fts_content WHERE id IN ({marks})", group
            )
            found.update((int(key), str(body or "")) for key, body in rows)
        return found

    def vectors(self) -> tuple[Keys, npt.NDArray[np.float32], Keys, Keys, list[str]]:
        """Every stored vector, the versions bounding its visibility (0: live), its tenant."""
        rows = self._reader.execute(
            "SELECT key, vector, added, coalesce(removed, 0), tenant FROM chunks ORDER BY key"
        ).fetchall()
        tenants = [str(row[4]) for row in rows]
        keys = np.array([row[0] for row in rows], dtype=np.int64)
        added = np.array([row[2] for row in rows], dtype=np.int64)
        removed = np.array([row[3] for row in rows], dtype=np.int64)
        if not rows:
            return keys, np.zeros((0, 0), dtype=np.float32), added, removed, tenants
        matrix = np.frombuffer(b"".join(row[1] for row in rows), dtype="<f4")
        return keys, matrix.reshape(len(rows), -1).astype(np.float32), added, removed, tenants

    def filter_values(self, keys: Sequence[int], name: str) -> dict[int, Any]:
        """One normalised metadata value per chunk key (None when absent)."""
        values: dict[int, Any] = {}
        for group in _groups(list(keys)):
            marks = ",".join("?" * len(group))
            rows = self._reader.execute(
                f"SELECT key, filter_meta FROM chunks WHERE key IN ({marks})", group
            )
            for key, meta in rows:
                values[key] = json.loads(meta).get(name)
        return values

    def content_hash(self, doc_id: str, tenant: str | None = None) -> str | None:
        row = self._reader.execute(
            "SELECT content_hash FROM documents WHERE tenant = ? AND doc_id = ?"
            " AND removed IS NULL",
            (tenant or "", doc_id),
        ).fetchone()
        return None if row is None else str(row[0])

    def live_documents(self, tenant: str | None = None) -> list[tuple[str, str | None, str]]:
        rows = self._reader.execute(
            "SELECT doc_id, uri, origin FROM documents WHERE tenant = ? AND removed IS NULL"
            " ORDER BY doc_id",
            (tenant or "",),
        ).fetchall()
        return [(str(doc_id), uri, str(origin)) for doc_id, uri, origin in rows]

    def document(self, doc_id: str, tenant: str | None = None) -> DocumentRow | None:
        row = self._reader.execute(
            f"SELECT {DOCUMENT_FIELDS} FROM documents"
            " WHERE tenant = ? AND doc_id = ? AND removed IS NULL",
            (tenant or "", doc_id),
        ).fetchone()
        return None if row is None else document_row(row)

    def document_chunks(self, doc_id: str, tenant: str | None = None) -> list[ChunkRow]:
        rows = self._reader.execute(
            f"SELECT {CHUNK_FIELDS} FROM chunks c JOIN documents d ON d.doc_key = c.doc_key"
            " WHERE c.tenant = ? AND c.doc_id = ? AND c.removed IS NULL ORDER BY c.idx",
            (tenant or "", doc_id),
        ).fetchall()
        return [chunk_row(row) for row in rows]

    def describe(self) -> dict[str, Any]:
        (tenants,) = self._reader.execute(
            "SELECT count(DISTINCT tenant) FROM documents WHERE removed IS NULL"
        ).fetchone()
        files = [file for file in (self.path, Path(f"{self.path}-wal")) if file.is_file()]
        size = sum(file.stat().st_size for file in files)
        return {"tenants": int(tenants), "size_bytes": size}

    def remembered(self, idempotency_key: str) -> str | None:
        row = self._reader.execute(
            "SELECT result FROM idempotency WHERE key = ?", (idempotency_key,)
        ).fetchone()
        return None if row is None else str(row[0])

    def setting(self, name: str) -> str | None:
        row = self._writer.execute("SELECT value FROM settings WHERE name = ?", (name,)).fetchone()
        return None if row is None else str(row[0])

    def setting_default(self, name: str, value: str) -> str:
        existing = self.setting(name)
        if existing is not None:  # the common case writes nothing
            return existing
        with self._transaction() as connection:
            connection.execute(
                "INSERT OR IGNORE INTO settings (name, value) VALUES (?, ?)", (name, value)
            )
        return self.setting(name) or value

    def open_dense(self, dimension: int, policy: DensePolicy | None = None) -> LocalDenseSearch:
        """The process-local dense index, loaded from this file's vectors and kept current."""
        # The saved ANN graph names the file it belongs to: a re-created index (keys
        # start again at 1) never reads another file's graph.
        graph = None if str(self.path) == ":memory:" else self.path.with_suffix(".usearch")
        return self.index.open_dense(
            dimension, policy, graph, self._identity(), lambda: self.version
        )

    def set_setting(self, name: str, value: str) -> None:
        with self._transaction() as connection:
            connection.execute(
                "INSERT OR REPLACE INTO settings (name, value) VALUES (?, ?)", (name, value)
            )

    def count(self, tenant: str | None = None) -> tuple[int, int]:
        """(documents, chunks) of a tenant's live corpus."""
        live = "WHERE removed IS NULL AND tenant = ?"
        scope = (tenant or "",)
        documents = self._reader.execute(f"SELECT count(*) FROM documents {live}", scope)
        chunks = self._reader.execute(f"SELECT count(*) FROM chunks {live}", scope)
        return int(documents.fetchone()[0]), int(chunks.fetchone()[0])

    def close(self) -> None:
        if self._cache is not None:
            self._cache.close()
        self._writer.close()


@dataclass(frozen=True, slots=True)
class _Pinned:
    """A thread's one snapshot: the mirror it reads and the floor its read transaction saw."""

    mirror: Snapshot
    floor: int


def _stored_floor(connection: sqlite3.Connection) -> int:
    row = connection.execute("SELECT value FROM settings WHERE name = 'floor'").fetchone()
    return 0 if row is None else int(row[0])


def _stored_version(connection: sqlite3.Connection) -> int:
    row = connection.execute("SELECT value FROM settings WHERE name = 'version'").fetchone()
    return 0 if row is None else int(row[0])


def _groups(items: Sequence[Any]) -> Iterator[list[Any]]:
    for start in range(0, len(items), _IN_BATCH):
        yield list(items[start : start + _IN_BATCH])
