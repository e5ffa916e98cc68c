"""An integration in process: an :class:`rcpkit.Index` where a :class:`Connection` would be.

``index="./idx"`` (or an opened ``rcpkit.Index``) gives every integration the
calls it makes of an RCP server — ``retrieve``, ``index/add``, ``index/delete``
and the advertised capabilities — answered by the index in this process: no
server, no subprocess, no JSON-RPC. The hits are the ones ``retrieve`` returns
(``Index.search`` is the handler's own entry point).
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable, Coroutine, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from rcpkit.integrations._connect import Connection
from rcpkit.integrations._connect import connection_from as server_connection
from rcpkit.protocol import messages as m
from rcpkit.protocol.errors import RCPError

if TYPE_CHECKING:  # the engine is imported only when an index is used in process
    from rcpkit.library import Index, SearchResult

__all__ = ["LocalConnection", "connection_from", "local_index"]

T = TypeVar("T")


def connection_from(
    connection: Connection | None,
    *,
    command: Sequence[str] | None = None,
    url: str | None = None,
    token: str | None = None,
    registry: str | None = None,
    engine: str | None = None,
    timeout: float | None = 60.0,
    index: str | Path | Index | None = None,
) -> Connection:
    """The connection an integration was given or built from its shorthand, or with
    ``index`` (a folder, a database URL or an opened ``rcpkit.Index``) one in process."""
    if index is None:
        return server_connection(
            connection,
            command=command,
            url=url,
            token=token,
            registry=registry,
            engine=engine,
            timeout=timeout,
        )
    if connection is not None or command or url is not None or registry is not None:
        raise ValueError("give `index` (in process) or a server, not both")
    return LocalConnection(index)


def local_index(index: str | Path | Index) -> Index:
    """``index`` opened (a folder or database URL must exist), or the given Index."""
    from rcpkit.library import Index
    from rcpkit.library import open as open_index

    return index if isinstance(index, Index) else open_index(index)


class _LocalClient:
    """The blocking client's calls the integrations make, on the Index."""

    def __init__(self, index: Index) -> None:
        self.index = index

    @property
    def raw_capabilities(self) -> Mapping[str, Any]:
        return self.index.capabilities

    def retrieve(self, query: str, **options: Any) -> SearchResult:
        with _as_rcp_errors():  # the client's keywords are Index.search's
            return self.index.search(query, **options)

    def index_add(
        self, documents: Sequence[Mapping[str, Any]], *, chunk: bool | None = None
    ) -> m.IndexAddResult:
        with _as_rcp_errors():
            added = self.index.add(list(documents), chunk=chunk is not False)
        return m.IndexAddResult(
            ids=added.ids, chunks=added.chunks, index_version=str(added.version)
        )

    def index_delete(self, ids: Sequence[str]) -> m.IndexDeleteResult:
        with _as_rcp_errors():
            deleted = self.index.delete(list(ids))
        return m.IndexDeleteResult(deleted=deleted)


class _AsyncLocalClient:
    """The same calls awaited: each runs on a worker thread."""

    def __init__(self, blocking: _LocalClient) -> None:
        self._blocking = blocking

    async def retrieve(self, query: str, **options: Any) -> SearchResult:
        return await asyncio.to_thread(lambda: self._blocking.retrieve(query, **options))


class LocalConnection(Connection):
    """What an integration uses of a :class:`Connection`, answered in process."""

    def __init__(self, index: str | Path | Index) -> None:  # no Source: nothing to reach
        self._owned = isinstance(index, str | Path)
        self.index = local_index(index)
        self._client = _LocalClient(self.index)
        self.timeout: float | None = None
        # An index this connection opened is closed with it, even if close() is never called.
        self._closer = weakref.finalize(self, self.index.close) if self._owned else None

    @property
    def client(self) -> _LocalClient:  # type: ignore[override]
        return self._client

    @property
    def capabilities(self) -> Mapping[str, Any]:
        return self.index.capabilities

    def call(self, work: Callable[[Any], T]) -> T:
        return work(self._client)

    async def run(self, work: Callable[[Any], Coroutine[Any, Any, T]]) -> T:
        return await work(_AsyncLocalClient(self._client))

    def documents(self, ids: Sequence[str]) -> list[dict[str, Any]] | None:
        """The stored documents among ``ids``, read from the index (``Index.get``)."""
        with _as_rcp_errors():
            stored = self.index.get(dict.fromkeys(ids))
        return [
            {"id": d.id, "text": d.text, "title": d.title, "uri": d.uri, "meta": d.meta}
            for d in stored
        ]

    def count_documents(self) -> int:
        """How many documents the index holds (``Index.stats``)."""
        with _as_rcp_errors():
            return int(self.index.stats()["documents"])

    def filter_fields(self) -> Mapping[str, Any]:
        """The fields a filter may name now, those declared at first sight since open too."""
        with _as_rcp_errors():
            fields = self.index.stats()["filter_fields"]
        return fields if isinstance(fields, Mapping) else {}

    def close(self) -> None:
        """Close the index if this connection opened it (a given Index is the caller's)."""
        if self._closer is not None:
            self._closer()

    def __repr__(self) -> str:
        return f"LocalConnection({self.index.where!r})"


class _as_rcp_errors:
    """A LibraryError as the RCPError the same call gets over the wire (the integrations
    already turn those into their framework's errors)."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, error: BaseException | None, trace: object) -> None:
        from rcpkit.library import LibraryError

        if isinstance(error, LibraryError) and error.code is not None:
            raise RCPError(error.code, error.message, field=error.field) from error
