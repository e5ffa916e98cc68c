"""Incremental writes inside one transaction: add chunks' mentions and edges, or take them back."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any, Final, Protocol

from rcpkit.engine.graph._cooccurrence import PairCounts, chunk_pairs, merge_pairs
from rcpkit.engine.graph._types import PHRASE_LABEL, Extraction

__all__ = [
    "CommunityRow",
    "Connection",
    "bump_version",
    "delete_chunks",
    "get_setting",
    "insert_chunks",
    "put_community_vectors",
    "put_entity_vectors",
    "replace_communities",
    "set_setting",
]

# (id, level, rank, parent, title, summary, size,
#  sentences [(chunk key, sentence index, text)], members [(eid, centrality)])
CommunityRow = tuple[
    str, int, int, str | None, str, str, int, list[tuple[int, int, str]], list[tuple[int, float]]
]


class Connection(Protocol):
    """What the writes need of a connection: sqlite3's, or the PostgreSQL graph's dialect."""

    def execute(self, sql: str, parameters: Any = ..., /) -> Any: ...

    def executemany(self, sql: str, parameters: Any, /) -> Any: ...


_IN_BATCH: Final = 500  # bound on `IN (?, …)` parameters per statement


def _batches(values: Sequence[int]) -> Iterable[Sequence[int]]:
    for start in range(0, len(values), _IN_BATCH):
        yield values[start : start + _IN_BATCH]


def insert_chunks(
    connection: Connection,
    chunks: Sequence[tuple[int, str, str]],
    extractions: Sequence[Extraction],
) -> None:
    """Add chunks (replacing any with the same key) with their mentions and edge counts."""
    delete_chunks(connection, [key for key, _, _ in chunks])
    connection.executemany(
        "INSERT INTO chunks (key, chunk_id) VALUES (?, ?)", [(k, i) for k, i, _ in chunks]
    )
    connection.executemany(
        'INSERT INTO sentences (chunk_key, idx, start, "end", text) VALUES (?, ?, ?, ?, ?)',
        [
            (key, index, start, end, text[start:end])
            for (key, _, text), extraction in zip(chunks, extractions, strict=True)
            for index, (start, end) in enumerate(extraction.sentences)
        ],
    )
    keys = sorted({m.key for extraction in extractions for m in extraction.mentions})
    connection.executemany(
        "INSERT OR IGNORE INTO entities (key, name, label, mentions, chunks)"
        " VALUES (?, ?, ?, 0, 0)",
        [(key, key, PHRASE_LABEL) for key in keys],
    )
    eid_of = _eids(connection, keys)
    rows = [
        (key, eid_of[m.key], m.sentence, m.start, m.end, m.surface, m.label)
        for (key, _, _), extraction in zip(chunks, extractions, strict=True)
        for m in extraction.mentions
    ]
    connection.executemany(
        'INSERT INTO mentions (chunk_key, eid, sentence, start, "end", surface, label)'
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
    by_chunk: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for chunk_key, eid, sentence, *_ in rows:
        by_chunk[chunk_key].append((eid, sentence))
    _add_edges(connection, merge_pairs(chunk_pairs(m) for m in by_chunk.values()), sign=1)
    _refresh_entities(connection, sorted(eid_of.values()))


def delete_chunks(connection: Connection, keys: Sequence[int]) -> int:
    """Remove chunks, their mentions and the edge counts they contributed; count removed."""
    keys = sorted(set(keys))
    by_chunk: dict[int, list[tuple[int, int]]] = defaultdict(list)
    removed = 0
    for batch in _batches(keys):
        marks = ",".join("?" * len(batch))
        removed += connection.execute(
            f"SELECT COUNT(*) FROM chunks WHERE key IN ({marks})", batch
        ).fetchone()[0]
        query = f"SELECT chunk_key, eid, sentence FROM mentions WHERE chunk_key IN ({marks})"
        for chunk_key, eid, sentence in connection.execute(query, batch):
            by_chunk[chunk_key].append((eid, sentence))
        for table, column in (
            ("mentions", "chunk_key"),
            ("sentences", "chunk_key"),
            ("chunks", "key"),
        ):
            connection.execute(f"DELETE FROM {table} WHERE {column} IN ({marks})", batch)
    if by_chunk:
        _add_edges(connection, merge_pairs(chunk_pairs(m) for m in by_chunk.values()), sign=-1)
        connection.execute("DELETE FROM edges WHERE sentences <= 0 AND chunks <= 0")
        _refresh_entities(connection, sorted({e for m in by_chunk.values() for e, _ in m}))
    return removed


def _eids(connection: Connection, keys: Sequence[str]) -> dict[str, int]:
    found: dict[str, int] = {}
    for start in range(0, len(keys), _IN_BATCH):
        batch = keys[start : start + _IN_BATCH]
        marks = ",".join("?" * len(batch))
        found.update(
            connection.execute(
                f"SELECT key, eid FROM entities WHERE key IN ({marks})", batch
            ).fetchall()
        )
    return found


def _add_edges(connection: Connection, pairs: PairCounts, sign: int) -> None:
    connection.executemany(
        "INSERT INTO edges (src, dst, sentences, chunks) VALUES (?, ?, ?, ?) ON CONFLICT"
        " (src, dst) DO UPDATE SET sentences = sentences + excluded.sentences,"
        " chunks = chunks + excluded.chunks",
        [(a, b, sign * s, sign * c) for (a, b), (s, c) in sorted(pairs.items())],
    )


def _refresh_entities(connection: Connection, eids: Sequence[int]) -> None:
    """Recount mentions; rename and relabel by majority; drop entities left with none."""
    surfaces: dict[int, Counter[str]] = defaultdict(Counter)
    labels: dict[int, Counter[str]] = defaultdict(Counter)
    chunks: dict[int, set[int]] = defaultdict(set)
    for batch in _batches(eids):
        marks = ",".join("?" * len(batch))
        query = f"SELECT eid, chunk_key, surface, label FROM mentions WHERE eid IN ({marks})"
        for eid, chunk_key, surface, label in connection.execute(query, batch):
            surfaces[eid][surface] += 1
            labels[eid][label] += 1
            chunks[eid].add(chunk_key)
    gone = [eid for eid in eids if eid not in surfaces]
    for batch in _batches(gone):
        marks = ",".join("?" * len(batch))
        connection.execute(f"DELETE FROM entities WHERE eid IN ({marks})", batch)
    connection.executemany(
        "UPDATE entities SET vector = CASE WHEN name = ? THEN vector END,"
        " name = ?, label = ?, mentions = ?, chunks = ? WHERE eid = ?",
        [
            (name, name, _majority(labels[eid]), sum(surfaces[eid].values()), len(chunks[eid]), eid)
            for eid in sorted(surfaces)
            for name in [_majority(surfaces[eid], prefer_typed=False)]
        ],
    )


def _majority(counts: Counter[str], prefer_typed: bool = True) -> str:
    # A named-entity type beats PHRASE; then the most frequent; then the smallest, for determinism.
    return min(counts, key=lambda v: (prefer_typed and v == PHRASE_LABEL, -counts[v], v))


# --- settings, vector caches and communities: the same SQL in both graph stores ---


def get_setting(connection: Connection, name: str) -> str | None:
    row = connection.execute("SELECT value FROM settings WHERE name = ?", (name,)).fetchone()
    return None if row is None else str(row[0])


def set_setting(connection: Connection, name: str, value: str) -> None:
    connection.execute(
        "INSERT INTO settings (name, value) VALUES (?, ?)"
        " ON CONFLICT (name) DO UPDATE SET value = excluded.value",
        (name, value),
    )


def bump_version(connection: Connection) -> int:
    """The next graph version, recorded."""
    version = int(get_setting(connection, "graph.version") or 0) + 1
    set_setting(connection, "graph.version", str(version))
    return version


def _check_dimension(connection: Connection, dimension: int) -> None:
    # A different dimension than before drops every cached vector.
    if get_setting(connection, "vectors.dimension") != str(dimension):
        connection.execute("UPDATE entities SET vector = NULL")
        connection.execute("UPDATE communities SET vector = NULL")
        set_setting(connection, "vectors.dimension", str(dimension))


def put_entity_vectors(
    connection: Connection, rows: Sequence[tuple[int, bytes]], dimension: int
) -> None:
    _check_dimension(connection, dimension)
    connection.executemany(
        "UPDATE entities SET vector = ? WHERE eid = ?", [(blob, eid) for eid, blob in rows]
    )


def put_community_vectors(
    connection: Connection, rows: Sequence[tuple[str, bytes]], dimension: int
) -> None:
    _check_dimension(connection, dimension)
    connection.executemany(
        "UPDATE communities SET vector = ? WHERE id = ?", [(blob, cid) for cid, blob in rows]
    )


def replace_communities(connection: Connection, rows: Sequence[CommunityRow], version: int) -> None:
    """Every community replaced by ``rows``, computed from graph ``version``."""
    connection.execute("DELETE FROM communities")
    connection.execute("DELETE FROM community_members")
    connection.executemany(
        "INSERT INTO communities (id, level, rank, parent, title, summary, size, sentences)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [(r[0], r[1], r[2], r[3], r[4], r[5], r[6], json.dumps(r[7])) for r in rows],
    )
    connection.executemany(
        "INSERT INTO community_members (community, eid, centrality) VALUES (?, ?, ?)",
        [(row[0], eid, centrality) for row in rows for eid, centrality in row[8]],
    )
    set_setting(connection, "communities.version", str(version))
