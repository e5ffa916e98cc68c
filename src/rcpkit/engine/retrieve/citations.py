"""§3.1 citations: where a chunk came from, one builder for every hit that carries one."""

from __future__ import annotations

from rcpkit.engine.store.base import ChunkRow
from rcpkit.protocol.content import Citation

__all__ = ["citation_of"]


def citation_of(row: ChunkRow) -> Citation:
    """The chunk's source, URI, title, span and page, as a retrieve or graph hit cites it."""
    return Citation(
        source=row.source,
        uri=row.uri or None,
        title=row.title,
        start=row.start,
        end=row.end,
        page=row.page,
    )
