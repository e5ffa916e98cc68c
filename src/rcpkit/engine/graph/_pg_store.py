"""A tenant's graph in the shared PostgreSQL database, so every server sees one graph (issue 20).

The same tables as the graph file (``_schema``), in a PostgreSQL schema of
their own per tenant graph (``graph_<hash of the tenant>``): the graph's SQL
(``_writes``, ``_snapshot``, ``_community_index``, ``_vectors``) runs
unchanged but for its dialect — ``?`` placeholders become ``%s``, table names
are qualified by the graph's schema, ``INSERT OR IGNORE`` becomes
``ON CONFLICT DO NOTHING``. Qualified names, not ``search_path``: a graph read
may run inside the store's pinned transaction, whose own tables (``chunks``,
``settings``) must keep their meaning.

Writes from several servers serialise on a transaction-scoped advisory lock
of the graph: version bumps and entity recounts never interleave. A server
applies its own commits to the graph after they committed, so two servers'
applications may come in either order; chunks retired by the time a write
holds the lock are left out of it (the retiring server removes them, before
or after), so the graph ends with exactly the live chunks either way.
Retention is the store's: the graph holds only live chunks' entities.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from rcpkit.engine.graph._schema import SCHEMA_VERSION
from rcpkit.engine.graph._writes import Connection
from rcpkit.engine.graph.storage import GraphTables

__all__ = ["PostgresGraphStore"]

_TABLES = (
    "settings",
    "chunks",
    "sentences",
    "entities",
    "mentions",
    "edges",
    "communities",
    "community_members",
)
_NAMED = re.compile(r"\b(FROM|JOIN|INTO|UPDATE)\s+(" + "|".join(_TABLES) + r")\b", re.IGNORECASE)

_DDL = """
CREATE TABLE IF NOT EXISTS {s}.settings (name text PRIMARY KEY, value text NOT NULL);
CREATE TABLE IF NOT EXISTS {s}.chunks (key bigint PRIMARY KEY, chunk_id text NOT NULL);
CREATE TABLE IF NOT EXISTS {s}.sentences (
    chunk_key bigint NOT NULL, idx int NOT NULL, start int NOT NULL, "end" int NOT NULL,
    text text NOT NULL, PRIMARY KEY (chunk_key, idx)
);
CREATE TABLE IF NOT EXISTS {s}.entities (
    eid bigserial PRIMARY KEY, key text NOT NULL UNIQUE, name text NOT NULL,
    label text NOT NULL, mentions int NOT NULL, chunks int NOT NULL, vector bytea
);
CREATE TABLE IF NOT EXISTS {s}.mentions (
    chunk_key bigint NOT NULL, eid bigint NOT NULL, sentence int NOT NULL,
    start int NOT NULL, "end" int NOT NULL, surface text NOT NULL, label text NOT NULL
);
CREATE INDEX IF NOT EXISTS mentions_by_chunk ON {s}.mentions (chunk_key);
CREATE INDEX IF NOT EXISTS mentions_by_entity ON {s}.mentions (eid);
CREATE TABLE IF NOT EXISTS {s}.edges (
    src bigint NOT NULL, dst bigint NOT NULL, sentences int NOT NULL, chunks int NOT NULL,
    PRIMARY KEY (src, dst)
);
CREATE TABLE IF NOT EXISTS {s}.communities (
    id text PRIMARY KEY, level int NOT NULL, rank int NOT NULL, parent text,
    title text NOT NULL, summary text NOT NULL, size int NOT NULL,
    sentences text NOT NULL, vector bytea
);
CREATE INDEX IF NOT EXISTS communities_by_level ON {s}.communities (level, rank);
CREATE TABLE IF NOT EXISTS {s}.community_members (
    community text NOT NULL, eid bigint NOT NULL, centrality float8 NOT NULL,
    PRIMARY KEY (community, eid)
);
"""


class _Dialect:
    """The graph's SQLite statements on a psycopg connection, qualified by one schema."""

    def __init__(self, connection: Any, schema: str) -> None:
        self._connection = connection
        self._schema = schema

    def sql(self, query: str) -> str:
        target = re.search(r"INSERT INTO (\w+)", query)
        if target and "DO UPDATE" in query:  # PostgreSQL: `x = x + …` names the target's x
            query = re.sub(r"\b(\w+) = \1 \+", rf"\1 = {target.group(1)}.\1 +", query)
        query = _NAMED.sub(lambda m: f"{m.group(1)} {self._schema}.{m.group(2)}", query)
        if "INSERT OR IGNORE" in query:
            query = query.replace("INSERT OR IGNORE", "INSERT") + " ON CONFLICT DO NOTHING"
        return query.replace("?", "%s")

    def execute(self, query: str, parameters: Sequence[Any] = ()) -> Any:
        return self._connection.execute(self.sql(query), parameters)

    def executemany(self, query: str, rows: Sequence[Sequence[Any]]) -> Any:
        if not rows:
            return None
        with self._connection.cursor() as cursor:
            cursor.executemany(self.sql(query), rows)


class PostgresGraphStore(GraphTables):
    """One tenant's graph in the database of a ``PostgresStore`` (``name``: the tenant's hash)."""

    def __init__(
        self,
        store: Any,
        name: str,
        extractor_identity: str,
    ) -> None:
        if not re.fullmatch(r"[0-9a-f]{16}", name):
            raise ValueError("a graph is named by 16 hex digits")
        self._store = store
        self.schema = f"graph_{name}"
        self.path = f"{store.url.split('@')[-1]} schema {self.schema}"  # for messages only
        with self.transaction() as connection:
            self._bind(connection, "schema.version", SCHEMA_VERSION, "schema")
            self._bind(connection, "extractor.identity", extractor_identity, "extractor")

    @property
    def read_only(self) -> bool:
        """A standby's graph: read, never written (communities are computed in memory)."""
        return bool(self._store.read_only)

    @staticmethod
    def exists(store: Any, name: str) -> bool:
        with store.reading() as connection:
            (found,) = connection.execute(
                "SELECT count(*) FROM pg_namespace WHERE nspname = %s", (f"graph_{name}",)
            ).fetchone()
        return bool(found)

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        """A write transaction holding the graph's advisory lock (its tables made if new)."""
        with self._store.writing() as connection:
            connection.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (self.schema,))
            (found,) = connection.execute(
                "SELECT count(*) FROM pg_namespace WHERE nspname = %s", (self.schema,)
            ).fetchone()
            if not found:
                connection.execute(f"CREATE SCHEMA IF NOT EXISTS {self.schema}")
                connection.execute(_DDL.format(s=self.schema))
            yield _Dialect(connection, self.schema)

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Hold reads together: every ``read`` inside sees one snapshot."""
        with self._store.snapshot():
            yield

    def read(self, query: str, parameters: Sequence[Any] = ()) -> list[Any]:
        with self._store.reading() as connection:
            rows: list[Any] = (
                _Dialect(connection, self.schema).execute(query, parameters).fetchall()
            )
        return rows

    def _live(
        self, connection: Connection, chunks: Sequence[tuple[int, str, str]]
    ) -> set[int] | None:
        """Chunks retired since (another server's commit) are left out (the module's note)."""
        return {
            int(row[0])
            for row in connection.execute(
                "SELECT key FROM public.chunks WHERE key = ANY(?) AND removed IS NULL",
                ([key for key, _, _ in chunks],),
            )
        }

    def close(self) -> None:
        """Nothing to close: connections are the store's."""
