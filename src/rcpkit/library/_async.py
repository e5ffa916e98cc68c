"""The async twin: the same index, its blocking calls run on a worker thread."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rcpkit.library._index import AddResult, Document, Index, SearchResult, StoredDocument

if TYPE_CHECKING:
    from rcpkit.engine.ingest.folders import FolderRun

__all__ = ["AsyncIndex", "open_async"]


async def open_async(where: str | Path, **options: Any) -> AsyncIndex:
    """:func:`rcpkit.open` without blocking the event loop; the same options."""
    from rcpkit.library._open import open as open_index

    index = await asyncio.to_thread(functools.partial(open_index, where, **options))
    return AsyncIndex(index)


class AsyncIndex:
    """An :class:`Index` whose calls are awaited (the engine releases the GIL, so
    searches from many tasks run in parallel threads)."""

    def __init__(self, index: Index) -> None:
        self.index = index

    async def __aenter__(self) -> AsyncIndex:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    async def add(self, documents: Iterable[Document]) -> AddResult:
        return await asyncio.to_thread(self.index.add, list(documents))

    async def add_paths(self, paths: Iterable[str | Path], **options: Any) -> FolderRun:
        return await asyncio.to_thread(functools.partial(self.index.add_paths, paths, **options))

    async def search(self, query: str, **options: Any) -> SearchResult:
        return await asyncio.to_thread(functools.partial(self.index.search, query, **options))

    async def delete(self, ids: Iterable[str]) -> int:
        return await asyncio.to_thread(self.index.delete, list(ids))

    async def get(self, ids: Iterable[str]) -> list[StoredDocument]:
        return await asyncio.to_thread(self.index.get, list(ids))

    async def stats(self) -> Mapping[str, Any]:
        return await asyncio.to_thread(self.index.stats)

    async def close(self) -> None:
        await asyncio.to_thread(self.index.close)
