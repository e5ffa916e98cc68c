"""The graph file's tables: chunks and sentences, entities and mentions, edges, communities."""

from __future__ import annotations

from typing import Final

__all__ = ["SCHEMA", "SCHEMA_VERSION"]

SCHEMA_VERSION: Final = "1"

# Edges keep raw counts (src < dst by entity id); weights depend on corpus-wide
# statistics and are computed when the in-memory snapshot is built.
SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS settings (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS chunks (key INTEGER PRIMARY KEY, chunk_id TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sentences (
    chunk_key INTEGER NOT NULL, idx INTEGER NOT NULL,
    start INTEGER NOT NULL, "end" INTEGER NOT NULL, text TEXT NOT NULL,
    PRIMARY KEY (chunk_key, idx)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS entities (
    eid INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL, label TEXT NOT NULL,
    mentions INTEGER NOT NULL, chunks INTEGER NOT NULL,
    vector BLOB
);
CREATE TABLE IF NOT EXISTS mentions (
    chunk_key INTEGER NOT NULL, eid INTEGER NOT NULL, sentence INTEGER NOT NULL,
    start INTEGER NOT NULL, "end" INTEGER NOT NULL, surface TEXT NOT NULL, label TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS mentions_by_chunk ON mentions (chunk_key);
CREATE INDEX IF NOT EXISTS mentions_by_entity ON mentions (eid);
CREATE TABLE IF NOT EXISTS edges (
    src INTEGER NOT NULL, dst INTEGER NOT NULL,
    sentences INTEGER NOT NULL, chunks INTEGER NOT NULL,
    PRIMARY KEY (src, dst)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS communities (
    id TEXT PRIMARY KEY, level INTEGER NOT NULL, rank INTEGER NOT NULL, parent TEXT,
    title TEXT NOT NULL, summary TEXT NOT NULL, size INTEGER NOT NULL,
    sentences TEXT NOT NULL, vector BLOB
);
CREATE INDEX IF NOT EXISTS communities_by_level ON communities (level, rank);
CREATE TABLE IF NOT EXISTS community_members (
    community TEXT NOT NULL, eid INTEGER NOT NULL, centrality REAL NOT NULL,
    PRIMARY KEY (community, eid)
) WITHOUT ROWID;
"""
