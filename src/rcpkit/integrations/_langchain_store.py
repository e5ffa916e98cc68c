"""LangChain: :class:`RCPVectorStore`, a ``VectorStore`` that keeps the user's ``Embeddings``.

>>> store = RCPVectorStore.from_texts(texts, embedding, index="./idx")   # in process
>>> store.similarity_search("how do refunds work", k=4)
>>> store.similarity_search_by_vector(embedding.embed_query("refunds"), k=4)

On an index of your own vectors (``rcpkit.open(..., vectors=N)``, its
``embed.identity`` is ``vectors:…``) the texts and the query are embedded by
``embedding`` and the search is dense by those vectors. On an index with its own
model the index embeds the text itself (``embedding`` is not called) and
``similarity_search_by_vector`` is refused: a vector of another model means nothing
there. Documents are written unchunked (one RCP document per text, its id the
LangChain id); their metadata round-trips exactly.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import VectorStore

from rcpkit.integrations._connect import Connection
from rcpkit.integrations._local import connection_from
from rcpkit.integrations._retrieval import (
    PROBE_QUERY,
    Passthrough,
    every_hit,
    holds_own_vectors,
    retrieve,
)
from rcpkit.protocol.content import Hit

__all__ = ["RCPVectorStore"]

# The document's LangChain metadata as JSON: the index's own meta may add keys (lang, …)
# and type values at first sight; this copy gives back exactly what was written.
_METADATA_KEY = "lc_metadata"


class RCPVectorStore(VectorStore):
    """``add_texts`` is ``index/add``, ``similarity_search`` a dense ``retrieve``."""

    def __init__(
        self,
        embedding: Embeddings,
        connection: Connection | None = None,
        *,
        index: Any = None,
        command: Sequence[str] | None = None,
        url: str | None = None,
        token: str | None = None,
        registry: str | None = None,
        engine: str | None = None,
        timeout: float | None = 60.0,
    ) -> None:
        """Over ``connection`` or a server from ``command``/``url``/``registry``, or in
        process over ``index`` (a folder, a database URL or an opened ``rcpkit.Index``)."""
        self.embedding = embedding
        self._owned = connection is None
        self.connection = connection_from(
            connection,
            command=command,
            url=url,
            token=token,
            registry=registry,
            engine=engine,
            timeout=timeout,
            index=index,
        )

    @property
    def embeddings(self) -> Embeddings:
        return self.embedding

    @classmethod
    def from_texts(
        cls,
        texts: list[str],
        embedding: Embeddings,
        metadatas: list[dict[Any, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        **kwargs: Any,
    ) -> RCPVectorStore:
        """A store over ``kwargs``' index or server, with ``texts`` added."""
        store = cls(embedding, **kwargs)
        store.add_texts(texts, metadatas, ids=ids)
        return store

    def add_texts(
        self,
        texts: Iterable[str],
        metadatas: list[dict[Any, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        **kwargs: Any,
    ) -> list[str]:
        """§7.10 ``index/add``; a text whose id is stored already replaces it."""
        written = list(texts)
        if not written:
            return []
        # LangChain's add_documents passes each Document's id, None where it has none.
        given: list[str | None] = list(ids) if ids is not None else [None] * len(written)
        names = [str(name) if name else str(uuid.uuid4()) for name in given]
        if len(names) != len(written) or (metadatas is not None and len(metadatas) != len(written)):
            raise ValueError("give as many ids and metadatas as texts")
        documents = [
            _rcp_document(name, text, (metadatas or [{}] * len(written))[position])
            for position, (name, text) in enumerate(zip(names, written, strict=True))
        ]
        if holds_own_vectors(self.connection):  # else the index embeds the texts itself
            for document, vector in zip(
                documents, self.embedding.embed_documents(written), strict=True
            ):
                document["vector"] = [float(value) for value in vector]
        self.connection.call(lambda client: client.index_add(documents, chunk=False))
        return names

    def delete(self, ids: list[str] | None = None, **kwargs: Any) -> bool | None:
        """§7.11 ``index/delete`` of ``ids``. ``None`` deletes nothing, as LangChain's
        InMemoryVectorStore: the index may hold what other clients wrote."""
        if ids:
            wanted = list(ids)
            self.connection.call(lambda client: client.index_delete(wanted))
        return None

    def get_by_ids(self, ids: Sequence[str], /) -> list[Document]:
        """The stored documents among ``ids``, in their order: those ids are read, one
        call each; a server without rcpkit's ``x-rcpkit/document`` is listed instead."""
        stored = self.connection.documents(list(ids))
        if stored is not None:
            found = {document.id: document for document in map(_stored, stored)}
        else:
            wanted = set(ids)
            listed = (_document(hit) for hit in every_hit(self.connection, None))
            found = {document.id: document for document in listed if document.id in wanted}
        return [found[name] for name in ids if name in found]

    def similarity_search(
        self, query: str, k: int = 4, filter: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> list[Document]:
        return [document for document, _ in self.similarity_search_with_score(query, k, filter)]

    def similarity_search_with_score(
        self, query: str, k: int = 4, filter: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        """The ``k`` nearest texts to ``query`` (embedded by ``embedding`` on an index of
        own vectors); ``filter`` a §8 tree (in process also ``{field: value}``)."""
        options = Passthrough(mode="dense")
        if holds_own_vectors(self.connection):
            options = replace(options, vector=tuple(self.embedding.embed_query(query)))
        return self._search(query, k, filter, options)

    def similarity_search_by_vector(
        self,
        embedding: list[float],
        k: int = 4,
        filter: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> list[Document]:
        """The ``k`` nearest texts to ``embedding`` (an index of your own vectors only)."""
        if not holds_own_vectors(self.connection):
            raise ValueError(
                "this index embeds with its own model: search it by text; a vector goes "
                "to an index of your own vectors (rcpkit.open(..., vectors=N))"
            )
        options = Passthrough(mode="dense", vector=tuple(float(value) for value in embedding))
        return [document for document, _ in self._search(PROBE_QUERY, k, filter, options)]

    def _search(
        self, text: str, k: int, filter: Mapping[str, Any] | None, options: Passthrough
    ) -> list[tuple[Document, float]]:
        hits = retrieve(self.connection, text, k, dict(filter) if filter else None, options)
        return [(_document(hit), hit.score or 0.0) for hit in hits]

    def close(self) -> None:
        """Close the connection this store opened (a given one is the caller's)."""
        if self._owned:
            self.connection.close()


def _rcp_document(name: str, text: str, metadata: Mapping[Any, Any]) -> dict[str, Any]:
    meta = {str(key): value for key, value in metadata.items() if _scalar(value)}
    meta[_METADATA_KEY] = json.dumps(dict(metadata), default=str)
    return {"id": name, "text": text, "meta": meta}


def _scalar(value: object) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def _document(hit: Hit) -> Document:
    name = hit.chunk.doc_id if hit.chunk is not None else str(hit.id)
    return Document(page_content=hit.text or "", metadata=_metadata(hit.meta), id=name)


def _stored(document: Mapping[str, Any]) -> Document:
    """A document read by id (``Connection.documents``) as LangChain's."""
    text = document.get("text") or ""
    return Document(page_content=text, metadata=_metadata(document.get("meta")), id=document["id"])


def _metadata(meta: Mapping[str, Any] | None) -> dict[str, Any]:
    """The metadata as written: the JSON copy when there is one, else the index's meta."""
    given = dict(meta or {})
    stored = given.get(_METADATA_KEY)
    return json.loads(stored) if isinstance(stored, str) else given
