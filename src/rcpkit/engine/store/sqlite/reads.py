"""The embedded store's reads: rows by key or id, and SPLADE's recall in SQL.

Every other read (BM25, filters, vectors) goes to the query index's mirror of
this file; these are the rows the packing stage needs and the weights the
mirror does not hold.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from rcpkit.engine.filters import Filter, compile_sqlite
from rcpkit.engine.index import SparseQuery
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
from rcpkit.engine.store.sqlite.file import SQLiteFile, groups

__all__ = ["LIVE_DOCUMENT_TEXTS", "Reads"]

# A document with one chunk of the same text stores '' (``writes._insert_document``);
# its text is its live chunk's. A document of an older index holds its text.
_DOCUMENT_TEXT = (
    "CASE WHEN d.text = '' THEN coalesce((SELECT c.text FROM chunks c"
    " WHERE c.tenant = d.tenant AND c.doc_id = d.doc_id AND c.removed IS NULL), '')"
    " ELSE d.text END"
)
_DOCUMENT_FIELDS = DOCUMENT_FIELDS.replace(", text,", f", {_DOCUMENT_TEXT},")
# Every live document's id and text, for a reader of the file alone (the crash and
# race campaigns audit it without the engine): the one place that reads the layout.
LIVE_DOCUMENT_TEXTS = f"SELECT d.doc_id, {_DOCUMENT_TEXT} FROM documents d WHERE d.removed IS NULL"


class Reads(SQLiteFile):
    """Reads of the file's rows (through this thread's reader connection)."""

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
        for group in groups(list(keys)):
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
        for group in groups(list(keys)):
            marks = ",".join("?" * len(group))
            # The chunk joined is the only one of a document stored without its text.
            fields = JOINED_DOCUMENT_FIELDS.replace(
                "d.text", "CASE WHEN d.text = '' THEN c.text ELSE d.text END"
            )
            rows = self._reader.execute(
                f"SELECT c.key, {fields} FROM chunks c"
                f" JOIN documents d ON d.doc_key = c.doc_key WHERE c.key IN ({marks})",
                group,
            )
            found.update((int(row[0]), document_row(row[1:])) for row in rows)
        return found

    def body_terms(self, keys: Sequence[int]) -> dict[int, str]:
        """The FTS table's body column (what the indexer analysed), by key."""
        found: dict[int, str] = {}
        for group in groups(list(keys)):
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
        for group in groups(list(keys)):
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
            f"SELECT {_DOCUMENT_FIELDS} FROM documents d"
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

    def count(self, tenant: str | None = None) -> tuple[int, int]:
        """(documents, chunks) of a tenant's live corpus."""
        live = "WHERE removed IS NULL AND tenant = ?"
        scope = (tenant or "",)
        documents = self._reader.execute(f"SELECT count(*) FROM documents {live}", scope)
        chunks = self._reader.execute(f"SELECT count(*) FROM chunks {live}", scope)
        return int(documents.fetchone()[0]), int(chunks.fetchone()[0])

    def ingested(self, tenant: str | None = None) -> int:
        found = self._reader.execute(
            "SELECT count(*) FROM documents WHERE removed IS NULL AND tenant = ?"
            " AND origin = 'ingest'",
            (tenant or "",),
        )
        return int(found.fetchone()[0])
