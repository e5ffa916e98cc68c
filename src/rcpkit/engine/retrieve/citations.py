"""§3.1 citations: where a chunk came from, one builder for every hit that carries one."""

from __future__ import annotations

from typing import Any

from rcpkit.engine.store.base import ChunkRow
from rcpkit.protocol.content import Citation

__all__ = ["citation_of", "hit_meta"]


def citation_of(row: ChunkRow, span: tuple[int, int] | None = None) -> Citation:
    """The chunk's source, URI, title, span and page, as a retrieve or graph hit cites it.

    ``span``: the ``[start, end)`` of the document a longer unit's text is (§7.7.2).
    """
    start, end = span if span is not None else (row.start, row.end)
    return Citation(
        source=row.source,
        uri=row.uri or None,
        title=row.title,
        start=start,
        end=end,
        page=row.page,
    )


def hit_meta(row: ChunkRow, span: tuple[int, int] | None = None) -> dict[str, Any] | None:
    """The document's meta as a hit carries it; OCR ``regions`` narrowed to what it cites.

    OCR'd text (an image, a scanned PDF page) keeps ``[page, start, end, x0, y0,
    x1, y1]`` per recognised line in ``meta.regions``; a hit keeps the lines its
    span overlaps (the chunk's ``[start, end)``, or ``span``: a longer unit's, §7.7.2),
    so the citation points at a region of the page.
    """
    meta = row.meta
    if not meta:
        return None
    regions = meta.get("regions")
    if not isinstance(regions, list):
        return meta
    start, end = span if span is not None else (row.start, row.end)
    kept = [
        region
        for region in regions
        if isinstance(region, list) and len(region) >= 3 and region[1] < end and region[2] > start
    ]
    return {**meta, "regions": kept}
