"""Row-level helpers of the PostgreSQL store's commits: COPY batches, counters, keys.

A commit writes each table with one ``COPY`` (issue 20: a bulk ``index/add``).
The two big ones skip psycopg's per-field adaptation, which dominated the
client's share of a load:

* ``chunks`` goes as ``COPY … (FORMAT binary)`` built here, so each vector is
  sent as pgvector's binary form (``vector_recv``: dimension, a reserved word,
  big-endian float32s) instead of a decimal text literal PostgreSQL parses back;
* ``postings`` goes as one block of COPY text lines: its terms are FTS5
  ``unicode61`` tokens (``[^\\W_]+``, see ``rcpkit.engine.scoring.bm25.tokens``), which hold no
  tab, newline or backslash, so only the tenant needs COPY's escaping.
"""

from __future__ import annotations

import struct
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from rcpkit.engine.store.base import ChunkColumns

__all__ = [
    "ChunkRecords",
    "Pending",
    "add_counts",
    "copy_binary",
    "copy_rows",
    "copy_text",
    "draw_keys",
    "escape_copy_text",
]

# COPY BINARY framing (PostgreSQL docs, "Binary Format"): signature, flags, extension length.
_SIGNATURE = b"PGCOPY\n\xff\r\n\x00" + struct.pack(">ii", 0, 0)
_TRAILER = struct.pack(">h", -1)
_NULL = struct.pack(">i", -1)
_INT4 = struct.Struct(">ii")  # length 4, value
_INT8 = struct.Struct(">iq")  # length 8, value
_LENGTH = struct.Struct(">i")
_VECTOR_HEAD = struct.Struct(">iHH")  # length, then vector_recv's dimension and unused word
_JSONB_VERSION = b"\x01"  # jsonb_recv: a version byte, then the JSON text


class ChunkRecords:
    """The ``chunks`` rows of one commit as a COPY BINARY stream, in ``CHUNK_COLUMNS`` order."""

    # key, doc_key, tenant, doc_id, idx, start, "end", page, text, context, filter_meta,
    # embedding, length, added
    _FIELDS = struct.pack(">h", 14)

    def __init__(self) -> None:
        self._parts: list[bytes] = [_SIGNATURE]
        self.count = 0

    def add(
        self,
        key: int,
        columns: ChunkColumns,
        vector: npt.NDArray[np.float32],
        length: int,
        added: int,
    ) -> None:
        """One row: ``columns`` are ``NewChunk.row_values`` (``doc_key`` to ``filter_meta``)."""
        doc_key, tenant, doc_id, index, start, end, page, text, context, filter_meta = columns
        meta = filter_meta.encode()
        flat = np.ascontiguousarray(vector, dtype=">f4").reshape(-1)
        self._parts += [
            self._FIELDS,
            _INT8.pack(8, key),
            _INT8.pack(8, doc_key),
            _text(tenant),
            _text(doc_id),
            _INT4.pack(4, index),
            _INT4.pack(4, start),
            _INT4.pack(4, end),
            _NULL if page is None else _INT4.pack(4, page),
            _text(text),
            _NULL if context is None else _text(context),
            _LENGTH.pack(len(meta) + 1) + _JSONB_VERSION + meta,
            _VECTOR_HEAD.pack(4 + 4 * flat.size, flat.size, 0) + flat.tobytes(),
            _INT4.pack(4, length),
            _INT8.pack(8, added),
        ]
        self.count += 1

    def data(self) -> bytes:
        return b"".join([*self._parts, _TRAILER])


def _text(value: str) -> bytes:
    encoded = value.encode()
    return _LENGTH.pack(len(encoded)) + encoded


_COPY_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def escape_copy_text(value: str) -> str:
    """A value as a field of COPY's text format (backslash, tab, newline, CR escaped)."""
    return value.translate(_COPY_ESCAPES)


@dataclass(slots=True)
class Pending:
    """Rows of one commit, written with one COPY per table."""

    keys: Iterator[int] = field(default_factory=lambda: iter(()))
    documents: list[tuple[object, ...]] = field(default_factory=list)
    chunks: ChunkRecords = field(default_factory=ChunkRecords)
    postings: list[str] = field(default_factory=list)  # COPY text lines
    terms: Counter[str] = field(default_factory=Counter)  # chunks per new posting term
    tokens: int = 0


def add_counts(connection: Any, table: str, column: str, tenant: str, deltas: Counter[str]) -> None:
    """Add per-tenant frequency deltas in one statement; counts that reach 0 are dropped."""
    changed = {name: delta for name, delta in deltas.items() if delta}
    if not changed:
        return
    connection.execute(
        f"INSERT INTO {table} (tenant, {column}, df)"
        f" SELECT %s, name, delta FROM unnest(%s::text[], %s::bigint[]) AS d(name, delta)"
        f" ON CONFLICT (tenant, {column}) DO UPDATE SET df = {table}.df + excluded.df",
        (tenant, list(changed), list(changed.values())),
    )
    if any(delta < 0 for delta in changed.values()):
        connection.execute(f"DELETE FROM {table} WHERE tenant = %s AND df <= 0", (tenant,))


def draw_keys(connection: Any, sequence: str, count: int) -> list[int]:
    if count == 0:
        return []
    rows = connection.execute(
        "SELECT nextval(%s::regclass) FROM generate_series(1, %s)", (sequence, count)
    )
    return [int(row[0]) for row in rows]


def copy_rows(connection: Any, table: str, rows: Sequence[Sequence[object]]) -> None:
    if not rows:
        return
    with connection.cursor().copy(f"COPY {table} FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)


def copy_binary(connection: Any, table: str, records: ChunkRecords) -> None:
    if not records.count:
        return
    with connection.cursor().copy(f"COPY {table} FROM STDIN (FORMAT binary)") as copy:
        copy.write(records.data())


def copy_text(connection: Any, table: str, lines: Sequence[str]) -> None:
    """COPY prepared text-format lines (each ending in a newline) in one write."""
    if not lines:
        return
    with connection.cursor().copy(f"COPY {table} FROM STDIN") as copy:
        copy.write("".join(lines).encode())
