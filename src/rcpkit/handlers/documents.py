"""A §7.10 ``Document`` (its text read) → the indexer's ``SourceDocument``, and its vector.

Shared by the ``index/add`` handler and the in-process ``Index.add``, so a
document added either way gets the same id, content hash, modality and meta,
and the same checks of the caller's own vectors.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from rcpkit.engine.engine import Engine
from rcpkit.engine.ingest import PageSpan, SourceDocument, with_language
from rcpkit.engine.ingest.indexer import content_hash_of
from rcpkit.engine.models import Vectors, is_external, own_vectors
from rcpkit.protocol import messages as m
from rcpkit.protocol.errors import RCPError

__all__ = ["document_vectors", "query_vector", "source_document", "wire_vectors"]


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


def wire_vectors(documents: Sequence[m.Document]) -> list[list[float]] | None:
    """The documents' ``vector`` fields: all of them, or None when none carries one."""
    if all(document.vector is None for document in documents):
        return None
    for position, document in enumerate(documents):
        if document.vector is None:
            raise RCPError.invalid_params(
                f"documents[{position}].vector",
                "every document of one call carries its vector, or none does",
            )
    return [document.vector or [] for document in documents]


def document_vectors(
    engine: Engine,
    sources: Sequence[SourceDocument],
    rows: object | None,
    path: Callable[[int], str],
) -> dict[str, Vectors] | None:
    """Each document's own vector by id, checked and unit-length; None: the index embeds.

    An index created for your own vectors (``vectors:…``) takes only them; an index
    with a model takes none, so its vectors all come from one model (§15.7).
    """
    identity = engine.identity
    if rows is None:
        if is_external(identity):
            raise RCPError.invalid_params(
                path(0),
                f"this index holds your own vectors ({identity}): give each document's vector",
            )
        return None
    if not is_external(identity):
        raise RCPError.invalid_params(
            path(0),
            f"this index embeds its documents with {identity}; your own vectors go to an "
            "index created for them (vectors=<dimension>, --embedder vectors:<dimension>)",
        )
    matrix = own_vectors(rows, len(sources), engine.dimension, identity, path)
    return {source.id: row for source, row in zip(sources, matrix, strict=True)}


def query_vector(engine: Engine, row: Sequence[float] | None) -> tuple[float, ...] | None:
    """``retrieve``'s own query ``vector``, checked and unit-length; None: the engine embeds.

    Only an index of your own vectors takes one: against an index with a model it
    would compare vectors of two models (§15.7), so it is -32602, as is a wrong dimension.
    """
    if row is None:
        return None
    identity = engine.identity
    if not is_external(identity):
        raise RCPError.invalid_params(
            "vector",
            f"this index embeds queries with {identity}; a query vector goes to an index "
            "created for your own vectors (vectors=<dimension>, --embedder vectors:<dimension>)",
        )
    (unit,) = own_vectors([list(row)], 1, engine.dimension, identity, lambda _: "vector")
    return tuple(float(value) for value in unit)
