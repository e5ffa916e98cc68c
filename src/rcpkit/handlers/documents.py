"""A §7.10 ``Document`` (its text read) → the indexer's ``SourceDocument``.

Shared by the ``index/add`` handler and the in-process ``Index.add``, so a
document added either way gets the same id, content hash, modality and meta.
"""

from __future__ import annotations

from typing import Any

from rcpkit.engine.engine import Engine
from rcpkit.engine.ingest import PageSpan, SourceDocument, with_language
from rcpkit.engine.ingest.indexer import content_hash_of
from rcpkit.protocol import messages as m

__all__ = ["source_document"]


def source_document(
    engine: Engine,
    position: int,
    document: m.Document,
    text: str,
    meta: dict[str, Any],
    pages: list[PageSpan] | None = None,
) -> SourceDocument:
    """``document`` with its text (and image pages) read, as the indexer takes it."""
    digest = content_hash_of(text, meta, document.title)
    # §7.10: without an id the server mints one; a content hash keeps retries visible.
    doc_id = document.id or f"doc:{digest[:16]}:{engine.store.version}:{position}"
    modality: Any = "image" if pages else ("code" if document.modality == "code" else "text")
    source = SourceDocument(
        id=doc_id,
        text=text,
        title=document.title,
        uri=document.uri or "",
        modality=modality,
        meta=meta,
        pages=pages,
        content_hash=digest,
    )
    return with_language(source) if source.modality == "code" else source
