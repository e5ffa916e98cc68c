"""Where a knowledge graph's tables live, and what every such place does alike.

Two storages hold the graph's tables (``_schema``): a SQLite file of its own
(``_store.GraphStore``) and a schema of the shared PostgreSQL database
(``_pg_store.PostgresGraphStore``, issue 20). They differ only in how a
transaction and a read are opened; :class:`GraphTables` is everything else,
written once over those two (issue 28: the two classes were the same code twice).
Which one a tenant's graph gets is the backend's choice (``rcpkit.engine.backend``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol

from rcpkit.engine.graph._types import Extraction
from rcpkit.engine.graph._writes import (
    CommunityRow,
    Connection,
    bump_version,
    delete_chunks,
    get_setting,
    insert_chunks,
    put_community_vectors,
    put_entity_vectors,
    replace_communities,
    set_setting,
)

__all__ = ["CommunityRow", "GraphStorage", "GraphTables"]


class GraphStorage(Protocol):
    """A graph's system of record: settings, chunks, entities, edges, communities, vectors."""

    path: Path | str  # for messages only

    @property
    def read_only(self) -> bool:
        """A standby's graph: read, never written (communities are kept in memory)."""
        ...

    @property
    def version(self) -> int: ...

    @property
    def communities_version(self) -> int: ...

    def transaction(self) -> AbstractContextManager[Connection]: ...

    def reading(self) -> AbstractContextManager[None]: ...

    def read(self, query: str, parameters: Sequence[Any] = ()) -> list[Any]: ...

    def setting(self, name: str) -> str | None: ...

    def write_chunks(
        self, chunks: Sequence[tuple[int, str, str]], extractions: Sequence[Extraction]
    ) -> int: ...

    def delete_chunks(self, keys: Sequence[int]) -> int: ...

    def put_entity_vectors(self, rows: Sequence[tuple[int, bytes]], dimension: int) -> None: ...

    def put_community_vectors(self, rows: Sequence[tuple[str, bytes]], dimension: int) -> None: ...

    def save_communities(self, rows: Sequence[CommunityRow], version: int) -> None: ...

    def close(self) -> None: ...


class GraphTables(ABC):
    """The graph's reads and writes over a subclass's ``transaction()`` and ``read()``.

    Every write call is one transaction (atomic: a failure leaves the graph as
    it was); every write that changed the graph bumps its version.
    """

    path: Path | str

    @property
    def read_only(self) -> bool:
        return False

    @abstractmethod
    def transaction(self) -> AbstractContextManager[Connection]:
        """One write transaction, rolled back whole on any exception."""

    @abstractmethod
    def read(self, query: str, parameters: Sequence[Any] = ()) -> list[Any]:
        """All rows of one read query."""

    def _bind(self, connection: Connection, name: str, value: str, what: str) -> None:
        """Record ``value`` under ``name`` once; a graph built with another is refused."""
        recorded = get_setting(connection, name)
        if recorded is None:
            set_setting(connection, name, value)
        elif recorded != value:
            raise ValueError(f"graph {self.path} was built with {what} {recorded}, not {value}")

    def _live(
        self, connection: Connection, chunks: Sequence[tuple[int, str, str]]
    ) -> set[int] | None:
        """The keys of ``chunks`` still live in the index (None: all of them)."""
        return None

    def setting(self, name: str) -> str | None:
        rows = self.read("SELECT value FROM settings WHERE name = ?", (name,))
        return str(rows[0][0]) if rows else None

    @property
    def version(self) -> int:
        """Bumped by every write that changed the graph."""
        return int(self.setting("graph.version") or 0)

    @property
    def communities_version(self) -> int:
        """The graph version the stored communities were computed from (-1: never)."""
        return int(self.setting("communities.version") or -1)

    def write_chunks(
        self, chunks: Sequence[tuple[int, str, str]], extractions: Sequence[Extraction]
    ) -> int:
        """Upsert chunks (those still live) with their extractions; the graph version after."""
        with self.transaction() as connection:
            live = self._live(connection, chunks)
            kept = [
                (chunk, extraction)
                for chunk, extraction in zip(chunks, extractions, strict=True)
                if live is None or chunk[0] in live
            ]
            if not kept:
                return int(get_setting(connection, "graph.version") or 0)
            insert_chunks(connection, [c for c, _ in kept], [e for _, e in kept])
            return bump_version(connection)

    def delete_chunks(self, keys: Sequence[int]) -> int:
        """Delete chunks; the number that existed (0 leaves the version alone)."""
        with self.transaction() as connection:
            removed = delete_chunks(connection, keys)
            if removed:
                bump_version(connection)
            return removed

    def put_entity_vectors(self, rows: Sequence[tuple[int, bytes]], dimension: int) -> None:
        """Cache name vectors; a different dimension than before drops every cached vector.

        A read-only graph keeps no cache (its vectors are recomputed).
        """
        if self.read_only:
            return
        with self.transaction() as connection:
            put_entity_vectors(connection, rows, dimension)

    def put_community_vectors(self, rows: Sequence[tuple[str, bytes]], dimension: int) -> None:
        """Cache summary vectors, under the same dimension rule as entity vectors."""
        if self.read_only:
            return
        with self.transaction() as connection:
            put_community_vectors(connection, rows, dimension)

    def save_communities(self, rows: Sequence[CommunityRow], version: int) -> None:
        """Replace every community with ``rows``, computed from graph ``version``."""
        with self.transaction() as connection:
            replace_communities(connection, rows, version)
