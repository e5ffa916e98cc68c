"""The embedded store: one SQLite file (WAL) is the system of record.

Why stdlib ``sqlite3`` and not ``apsw``: FTS5 and JSON1 are compiled into the
stock module here, and dense vectors live in numpy (exact) and usearch (ANN)
rebuilt from the BLOBs in this file, so no loadable extension is needed.

Every write is one ``BEGIN IMMEDIATE`` transaction: a crash mid-batch leaves
the previous version intact, and a committed version survives a process crash
(``synchronous=FULL``).
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from rcpkit.engine.store.base import (
    ChunkRow,
    CommitResult,
    DocumentRow,
    Keys,
    NewChunk,
    WriteBatch,
)

__all__ = ["SQLiteStore"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS settings (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    doc_id TEXT PRIMARY KEY, title TEXT, uri TEXT, source TEXT NOT NULL,
    modality TEXT NOT NULL, meta TEXT NOT NULL, content_hash TEXT NOT NULL,
    text TEXT NOT NULL, pages TEXT, version INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS chunks (
    key INTEGER PRIMARY KEY AUTOINCREMENT,
    doc_id TEXT NOT NULL REFERENCES documents(doc_id) ON DELETE CASCADE,
    idx INTEGER NOT NULL, start INTEGER NOT NULL, "end" INTEGER NOT NULL, page INTEGER,
    text TEXT NOT NULL, context TEXT, filter_meta TEXT NOT NULL, vector BLOB NOT NULL,
    UNIQUE (doc_id, idx)
);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts
    USING fts5(title, body, tokenize = 'unicode61 remove_diacritics 0');
CREATE TABLE IF NOT EXISTS idempotency (key TEXT PRIMARY KEY, result TEXT NOT NULL);
"""

# BM25 column weights: a title match counts twice a body match.
_TITLE_WEIGHT, _BODY_WEIGHT = 2.0, 1.0
_IN_BATCH = 500  # bound on `IN (?, …)` parameters per statement


class SQLiteStore:
    """A store in one SQLite file; thread-safe (one writer, a connection per reader thread)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        if str(path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._write_lock = threading.Lock()
        self._local = threading.local()
        self._writer = self._connect()
        self._writer.executescript(_SCHEMA)
        self._version = int(self.setting("version") or 0)

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
        """The last committed index version."""
        return self._version

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

    def commit(self, batch: WriteBatch, idempotency: tuple[str, str] | None = None) -> CommitResult:
        """Apply ``batch`` atomically and return the new version and what changed."""
        added: list[tuple[int, npt.NDArray[np.float32]]] = []
        with self._transaction() as connection:
            version = self._version + 1
            doc_ids = [document.doc_id for document, _ in batch.documents]
            removed = self._remove(connection, doc_ids)
            deleted = self._remove_documents(connection, batch.delete, removed)
            for document, chunks in batch.documents:
                self._insert_document(connection, document, version)
                added.extend(self._insert_chunks(connection, document, chunks))
            connection.execute(
                "INSERT OR REPLACE INTO settings (name, value) VALUES ('version', ?)", (version,)
            )
            if idempotency is not None:
                connection.execute(
                    "INSERT OR REPLACE INTO idempotency (key, result) VALUES (?, ?)", idempotency
                )
        self._version = version
        return CommitResult(version, added, removed, deleted)

    def _remove(self, connection: sqlite3.Connection, doc_ids: Sequence[str]) -> list[int]:
        keys: list[int] = []
        for group in _groups(doc_ids):
            marks = ",".join("?" * len(group))
            rows = connection.execute(
                f"SELECT key FROM chunks WHERE doc_id IN ({marks})", group
            ).fetchall()
            keys.extend(row[0] for row in rows)
            connection.execute(f"DELETE FROM chunks WHERE doc_id IN ({marks})", group)
        for group in _groups(keys):
            marks = ",".join("?" * len(group))
            connection.execute(f"DELETE FROM chunks_fts WHERE rowid IN ({marks})", group)
        return keys

    def _remove_documents(
        self, connection: sqlite3.Connection, doc_ids: Sequence[str], removed: list[int]
    ) -> int:
        if not doc_ids:
            return 0
        removed.extend(self._remove(connection, doc_ids))
        deleted = 0
        for group in _groups(list(dict.fromkeys(doc_ids))):
            marks = ",".join("?" * len(group))
            cursor = connection.execute(f"DELETE FROM documents WHERE doc_id IN ({marks})", group)
            deleted += cursor.rowcount
        return deleted

    def _insert_document(
        self, connection: sqlite3.Connection, document: DocumentRow, version: int
    ) -> None:
        connection.execute(
            "INSERT OR REPLACE INTO documents (doc_id, title, uri, source, modality, meta,"
            " content_hash, text, pages, version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                document.doc_id,
                document.title,
                document.uri,
                document.source,
                document.modality,
                json.dumps(document.meta, ensure_ascii=False),
                document.content_hash,
                document.text,
                json.dumps(document.pages) if document.pages else None,
                version,
            ),
        )

    def _insert_chunks(
        self, connection: sqlite3.Connection, document: DocumentRow, chunks: Sequence[NewChunk]
    ) -> list[tuple[int, npt.NDArray[np.float32]]]:
        added = []
        for chunk in chunks:
            vector = np.ascontiguousarray(chunk.vector, dtype="<f4")
            cursor = connection.execute(
                'INSERT INTO chunks (doc_id, idx, start, "end", page, text, context, filter_meta,'
                " vector) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    document.doc_id,
                    chunk.index,
                    chunk.start,
                    chunk.end,
                    chunk.page,
                    chunk.text,
                    chunk.context,
                    json.dumps(chunk.filter_meta, ensure_ascii=False),
                    vector.tobytes(),
                ),
            )
            key = int(cursor.lastrowid or 0)
            connection.execute(
                "INSERT INTO chunks_fts (rowid, title, body) VALUES (?, ?, ?)",
                (key, chunk.title_terms, chunk.body_terms),
            )
            added.append((key, vector.astype(np.float32)))
        return added

    # --- reads ---

    def lexical(
        self, match: str, limit: int, where: str | None, params: Sequence[object]
    ) -> list[tuple[int, float]]:
        """BM25 over title and body; scores are positive, higher is better."""
        sql = (
            f"SELECT f.rowid, bm25(chunks_fts, {_TITLE_WEIGHT}, {_BODY_WEIGHT}) AS rank"
            " FROM chunks_fts AS f"
        )
        arguments: list[object] = [match]
        if where:
            sql += " JOIN chunks ON chunks.key = f.rowid WHERE chunks_fts MATCH ? AND " + where
            arguments.extend(params)
        else:
            sql += " WHERE chunks_fts MATCH ?"
        sql += " ORDER BY rank, f.rowid LIMIT ?"
        arguments.append(limit)
        rows = self._reader.execute(sql, arguments).fetchall()
        return [(int(key), -float(rank)) for key, rank in rows]

    def filtered_keys(self, where: str, params: Sequence[object]) -> Keys:
        rows = self._reader.execute(f"SELECT key FROM chunks WHERE {where}", list(params))
        return np.fromiter((row[0] for row in rows), dtype=np.int64)

    def fetch(self, keys: Sequence[int]) -> dict[int, ChunkRow]:
        found: dict[int, ChunkRow] = {}
        for group in _groups(list(keys)):
            marks = ",".join("?" * len(group))
            rows = self._reader.execute(
                'SELECT c.key, c.doc_id, c.idx, c.start, c."end", c.text, c.page, c.context,'
                " d.modality, d.title, d.uri, d.source, d.meta"
                f" FROM chunks c JOIN documents d ON d.doc_id = c.doc_id WHERE c.key IN ({marks})",
                group,
            )
            for key, doc_id, index, start, end, text, page, context, *document in rows:
                modality, title, uri, source, meta = document
                found[key] = ChunkRow(
                    key, doc_id, index, start, end, text, page, context,
                    modality, title, uri, source, json.loads(meta),
                )  # fmt: skip
        return found

    def vectors(self) -> tuple[Keys, npt.NDArray[np.float32]]:
        rows = self._reader.execute("SELECT key, vector FROM chunks ORDER BY key").fetchall()
        keys = np.array([row[0] for row in rows], dtype=np.int64)
        if not rows:
            return keys, np.zeros((0, 0), dtype=np.float32)
        matrix = np.frombuffer(b"".join(row[1] for row in rows), dtype="<f4")
        return keys, matrix.reshape(len(rows), -1).astype(np.float32)

    def content_hash(self, doc_id: str) -> str | None:
        row = self._reader.execute(
            "SELECT content_hash FROM documents WHERE doc_id = ?", (doc_id,)
        ).fetchone()
        return None if row is None else str(row[0])

    def remembered(self, idempotency_key: str) -> str | None:
        row = self._reader.execute(
            "SELECT result FROM idempotency WHERE key = ?", (idempotency_key,)
        ).fetchone()
        return None if row is None else str(row[0])

    def setting(self, name: str) -> str | None:
        row = self._writer.execute("SELECT value FROM settings WHERE name = ?", (name,)).fetchone()
        return None if row is None else str(row[0])

    def set_setting(self, name: str, value: str) -> None:
        with self._transaction() as connection:
            connection.execute(
                "INSERT OR REPLACE INTO settings (name, value) VALUES (?, ?)", (name, value)
            )

    def count(self) -> tuple[int, int]:
        """(documents, chunks)."""
        documents = self._reader.execute("SELECT count(*) FROM documents").fetchone()[0]
        chunks = self._reader.execute("SELECT count(*) FROM chunks").fetchone()[0]
        return int(documents), int(chunks)

    def close(self) -> None:
        self._writer.close()


def _groups(items: Sequence[Any]) -> Iterator[list[Any]]:
    for start in range(0, len(items), _IN_BATCH):
        yield list(items[start : start + _IN_BATCH])
