"""Haystack: a DocumentStore and a retriever component over any RCP server (``rcpkit[haystack]``).

>>> store = RCPDocumentStore(url="http://127.0.0.1:8080/rcp", token=Secret.from_env_var("TOKEN"))
>>> store.write_documents([Document(content="RRF fuses ranked lists", meta={"lang": "en"})])
>>> retriever = RCPRetriever(document_store=store, top_k=5)
>>> retriever.run(query="fusion", filters={"field": "meta.lang", "operator": "==", "value": "en"})

The server embeds and ranks; documents are written with ``index/add`` (one RCP
document per Haystack Document, unchunked, so ids and content round-trip) and
deleted with ``index/delete``. RCP has no listing method, so ``filter_documents``
pages through a dense ``retrieve`` of what the filter selects to its end (§10,
the ``pagination`` capability). ``count_documents`` asks the index for its count
and ``write_documents`` for the ids it writes, where the index offers that (in
process, or rcpkit's ``x-rcpkit`` methods); another server's whole index is
listed. Filters become §8 trees over the server's advertised metadata fields
(``meta.<field>``); a field the server does not advertise, or a filter on
``content``/``id``, is a ``FilterError``. Other refusals are
``DocumentStoreError`` naming the RCP error.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from haystack import Document, component, default_from_dict, default_to_dict
from haystack.document_stores.errors import DocumentStoreError, DuplicateDocumentError
from haystack.document_stores.types import DuplicatePolicy
from haystack.errors import FilterError
from haystack.utils import Secret, deserialize_secrets_inplace

from rcpkit.integrations._connect import Connection, Source
from rcpkit.integrations._local import connection_from
from rcpkit.integrations._retrieval import (
    PROBE_QUERY,
    Passthrough,
    every_hit,
    hit_metadata,
    holds_own_vectors,
    query_vector,
    retrieve,
    retrieve_async,
)
from rcpkit.protocol.content import Hit
from rcpkit.protocol.errors import ErrorCode, RCPError
from rcpkit.protocol.messages import RetrieveMode

__all__ = ["RCPDocumentStore", "RCPEmbeddingRetriever", "RCPRetriever", "to_rcp_filter"]


class RCPDocumentStore:
    """A Haystack DocumentStore whose documents live in an RCP server's index."""

    def __init__(
        self,
        *,
        url: str | None = None,
        token: Secret | str | None = None,
        command: list[str] | None = None,
        registry: str | None = None,
        engine: str | None = None,
        timeout: float | None = 60.0,
        index: Any = None,
    ) -> None:
        """Over a server (``url``, ``command`` or ``registry``), or in process over
        ``index``: a folder, a database URL or an opened ``rcpkit.Index``."""
        if isinstance(token, str):  # usable, but to_dict refuses to write it out
            token = Secret.from_token(token)
        self.url = url
        self.token = token
        self.command = command
        self.registry = registry
        self.engine = engine
        self.timeout = timeout
        self.index = index
        if index is not None:
            self.connection = connection_from(None, index=index)
            return
        resolved = token.resolve_value() if token is not None else None
        source = Source(
            command=tuple(command or ()),
            url=url,
            token=resolved,
            registry=registry,
            engine=engine,
        )
        self.connection = Connection(source, timeout=timeout)

    @classmethod
    def from_connection(cls, connection: Connection) -> RCPDocumentStore:
        """A store over an open, shared :class:`Connection` (one session for many users)."""
        source = connection.source
        store = cls(
            url=source.url,
            command=list(source.command) or None,
            registry=source.registry,
            engine=source.engine,
            timeout=connection.timeout,
        )
        store.connection = connection
        return store

    def to_dict(self) -> dict[str, Any]:
        if self.index is not None and not isinstance(self.index, str | Path):
            raise ValueError("give `index` as a folder or URL to serialize this store")
        if self.index is not None:
            return default_to_dict(self, index=str(self.index))
        if self.token is None and self.connection.source.token is not None:
            # A plain-string token would be written into the pipeline's YAML.
            raise ValueError("give the token as Secret.from_env_var(...) to serialize this store")
        return default_to_dict(
            self,
            url=self.url,
            token=self.token.to_dict() if self.token is not None else None,
            command=self.command,
            registry=self.registry,
            engine=self.engine,
            timeout=self.timeout,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RCPDocumentStore:
        deserialize_secrets_inplace(data["init_parameters"], keys=["token"])
        store: RCPDocumentStore = default_from_dict(cls, data)
        return store

    # --- the DocumentStore protocol ---

    def count_documents(self) -> int:
        """The index's count when it offers one (in process, ``x-rcpkit/stats``), else
        a listing's."""
        with _store_errors():
            counted = self.connection.count_documents()
        return counted if counted is not None else len(self._ids(None))

    def filter_documents(self, filters: dict[str, Any] | None = None) -> list[Document]:
        return self._documents(to_rcp_filter(filters))

    def write_documents(
        self, documents: list[Document], policy: DuplicatePolicy = DuplicatePolicy.NONE
    ) -> int:
        """``index/add``; ``NONE`` means ``FAIL``. FAIL and SKIP list the index first."""
        if not isinstance(documents, list) or not all(
            isinstance(document, Document) for document in documents
        ):
            raise ValueError("write_documents takes a list of Documents")
        policy = DuplicatePolicy.FAIL if policy == DuplicatePolicy.NONE else policy
        if policy != DuplicatePolicy.OVERWRITE:
            stored = self._held([document.id for document in documents])
            clashes = [document.id for document in documents if document.id in stored]
            if clashes and policy == DuplicatePolicy.FAIL:
                raise DuplicateDocumentError(f"ID '{clashes[0]}' already exists")
            documents = [document for document in documents if document.id not in stored]
        unique = list({document.id: document for document in documents}.values())
        if not unique:
            return 0
        own = holds_own_vectors(self.connection)  # else the index embeds the text itself
        wire = [_rcp_document(document, own) for document in unique]
        with _store_errors():
            self.connection.call(lambda client: client.index_add(wire, chunk=False))
        return len(unique)

    def delete_documents(self, document_ids: list[str]) -> None:
        if document_ids:
            ids = list(document_ids)
            with _store_errors():
                self.connection.call(lambda client: client.index_delete(ids))

    # --- the optional extensions the haystack test mixins know ---

    def delete_all_documents(self) -> None:
        self.delete_documents(self._ids(None))

    def count_documents_by_filter(self, filters: dict[str, Any]) -> int:
        return len(self._ids(to_rcp_filter(filters)))

    def delete_by_filter(self, filters: dict[str, Any]) -> int:
        """Delete the documents ``filters`` selects; an empty or ``None`` filter is refused.

        Haystack's InMemoryDocumentStore refuses a filter without an ``operator``
        (FilterError) rather than read it as "every document": so does this store.
        """
        tree = to_rcp_filter(filters)
        if tree is None:
            raise FilterError(
                "delete_by_filter needs a filter with an `operator`; "
                "to delete every document call delete_all_documents()"
            )
        ids = self._ids(tree)
        self.delete_documents(ids)
        return len(ids)

    def _listed(self, tree: dict[str, Any] | None) -> dict[str, list[Hit]]:
        """Every listed chunk, by the id of the document it belongs to."""
        with _store_errors():
            hits = every_hit(self.connection, tree, unit=_whole_documents(self.connection))
        chunks: dict[str, list[Hit]] = {}
        for hit in hits:
            chunks.setdefault(_document_id(hit), []).append(hit)
        return chunks

    def _held(self, ids: list[str]) -> set[str]:
        """Which of ``ids`` the index holds: read by id when it can, else from a listing."""
        with _store_errors():
            found = self.connection.documents(ids)
        if found is None:
            return set(self._ids(None))
        return {str(document["id"]) for document in found}

    def _ids(self, tree: dict[str, Any] | None) -> list[str]:
        return list(self._listed(tree))

    def _documents(self, tree: dict[str, Any] | None) -> list[Document]:
        return [_stored(id, chunks) for id, chunks in self._listed(tree).items()]


@component
class RCPRetriever:
    """Documents from an RCP server's ``retrieve`` (§7.7), with score, citation and trust."""

    def __init__(
        self,
        document_store: RCPDocumentStore | None = None,
        *,
        top_k: int = 10,
        filters: dict[str, Any] | None = None,
        mode: RetrieveMode | None = None,
        fusion: dict[str, Any] | None = None,
        rerank: dict[str, Any] | bool | None = None,
        token_budget: int | None = None,
        url: str | None = None,
        token: Secret | str | None = None,
        command: list[str] | None = None,
        registry: str | None = None,
        engine: str | None = None,
        timeout: float | None = 60.0,
        index: Any = None,
    ) -> None:
        """Over ``document_store``, or a store opened from ``url``/``command``/``registry``,
        or in process over ``index`` (a folder, a database URL or an ``rcpkit.Index``)."""
        shorthand = (url, token, command, registry, engine, index)
        if document_store is None and all(value in (None, []) for value in shorthand):
            raise ValueError(
                "give `document_store`, or one of `command`, `url`, `registry` or `index`"
            )
        if document_store is None:
            document_store = RCPDocumentStore(
                url=url,
                token=token,
                command=command,
                registry=registry,
                engine=engine,
                timeout=timeout,
                index=index,
            )
        elif any(value is not None for value in shorthand):
            raise ValueError("give either `document_store` or `url`/`command`/`registry`")
        if not isinstance(document_store, RCPDocumentStore):
            raise ValueError("document_store must be an RCPDocumentStore")
        self.document_store = document_store
        self.top_k = top_k
        self.filters = filters
        self.mode = mode
        self.fusion = fusion
        self.rerank = rerank
        self.token_budget = token_budget

    def warm_up(self) -> None:
        """Connect (``initialize``) before the first query."""
        self.document_store.connection.client  # noqa: B018 - the property connects

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(
            self,
            document_store=self.document_store.to_dict(),
            top_k=self.top_k,
            filters=self.filters,
            mode=self.mode,
            fusion=self.fusion,
            rerank=self.rerank,
            token_budget=self.token_budget,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RCPRetriever:
        parameters = data["init_parameters"]
        parameters["document_store"] = RCPDocumentStore.from_dict(parameters["document_store"])
        retriever: RCPRetriever = default_from_dict(cls, data)
        return retriever

    def _arguments(
        self, top_k: int | None, filters: dict[str, Any] | None
    ) -> tuple[int, dict[str, Any] | None, Passthrough]:
        options = Passthrough(
            mode=self.mode,
            fusion=self.fusion,
            rerank=self.rerank,
            token_budget=self.token_budget,
        )
        tree = to_rcp_filter(self.filters if filters is None else filters)
        return (self.top_k if top_k is None else top_k), tree, options

    @component.output_types(documents=list[Document])
    def run(
        self, query: str, top_k: int | None = None, filters: dict[str, Any] | None = None
    ) -> dict[str, list[Document]]:
        count, tree, options = self._arguments(top_k, filters)
        hits = retrieve(self.document_store.connection, query, count, tree, options)
        return {"documents": [_retrieved(hit) for hit in hits]}

    @component.output_types(documents=list[Document])
    async def run_async(
        self, query: str, top_k: int | None = None, filters: dict[str, Any] | None = None
    ) -> dict[str, list[Document]]:
        count, tree, options = self._arguments(top_k, filters)
        hits = await retrieve_async(self.document_store.connection, query, count, tree, options)
        return {"documents": [_retrieved(hit) for hit in hits]}


@component
class RCPEmbeddingRetriever:
    """Documents for a query embedding, on an index of your own vectors (Haystack's
    embedding retriever shape: the embedder before it in the pipeline is yours).

    ``query`` (optional) is the lexical arm's text: with it the search is hybrid,
    without it dense by the embedding alone.
    """

    def __init__(
        self,
        document_store: RCPDocumentStore,
        *,
        top_k: int = 10,
        filters: dict[str, Any] | None = None,
        fusion: dict[str, Any] | None = None,
    ) -> None:
        if not isinstance(document_store, RCPDocumentStore):
            raise ValueError("document_store must be an RCPDocumentStore")
        self.document_store = document_store
        self.top_k = top_k
        self.filters = filters
        self.fusion = fusion

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(
            self,
            document_store=self.document_store.to_dict(),
            top_k=self.top_k,
            filters=self.filters,
            fusion=self.fusion,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RCPEmbeddingRetriever:
        parameters = data["init_parameters"]
        parameters["document_store"] = RCPDocumentStore.from_dict(parameters["document_store"])
        retriever: RCPEmbeddingRetriever = default_from_dict(cls, data)
        return retriever

    @component.output_types(documents=list[Document])
    def run(
        self,
        query_embedding: list[float],
        filters: dict[str, Any] | None = None,
        top_k: int | None = None,
        query: str | None = None,
    ) -> dict[str, list[Document]]:
        connection = self.document_store.connection
        vector = query_vector(connection, query_embedding)
        if vector is None:
            raise ValueError(
                "this index embeds queries with its own model: query it by text "
                "(RCPRetriever); an embedding goes to an index of your own vectors"
            )
        options = Passthrough(
            mode=None if query else "dense",
            fusion=self.fusion if query else None,
            vector=vector,
        )
        tree = to_rcp_filter(self.filters if filters is None else filters)
        count = self.top_k if top_k is None else top_k
        with _store_errors():
            hits = retrieve(connection, query or PROBE_QUERY, count, tree, options)
        return {"documents": [_retrieved(hit) for hit in hits]}


def _rcp_document(document: Document, own_vectors: bool = False) -> dict[str, Any]:
    wire: dict[str, Any] = {
        "id": document.id,
        "text": document.content or "",
        "meta": dict(document.meta),
    }
    if own_vectors and document.embedding is not None:
        wire["vector"] = list(document.embedding)
    return wire


def _document_id(hit: Hit) -> str:
    return hit.chunk.doc_id if hit.chunk is not None else str(hit.id)


def _whole_documents(connection: Connection) -> str | None:
    """``"document"`` when the server lists whole documents (§7.7.2 ``retrieve.units``).

    A document hit is its document's stored text, verbatim: nothing to stitch.
    """
    block = connection.require("retrieve", "retrieve")
    units = block.get("units")
    return "document" if isinstance(units, list) and "document" in units else None


def _stored(identifier: str, chunks: list[Hit]) -> Document:
    """A listed document as it was written: its id, meta and whole text.

    A server that lists whole documents gives it as one hit. Another lists a
    document indexed chunked as its chunks; any one of them passed off as the
    document would be written back cut short (OVERWRITE), so they are stitched.
    """
    ordered = sorted(chunks, key=lambda hit: hit.chunk.index if hit.chunk is not None else 0)
    meta = dict(ordered[0].meta or {})
    if len(ordered) == 1 and (ordered[0].unit == "document" or _whole(ordered[0])):
        return Document(id=identifier, content=ordered[0].text, meta=meta)
    text = _stitched(ordered)
    if text is None:
        raise DocumentStoreError(
            f"document `{identifier}` is listed as {len(ordered)} chunks whose citation "
            "offsets do not cover its text: it cannot be listed whole"
        )
    return Document(id=identifier, content=text, meta=meta)


def _whole(hit: Hit) -> bool:
    """A hit that is its document's text from the start (a server may not say more)."""
    if hit.chunk is None:
        return True
    start = hit.citation.start if hit.citation is not None else None
    return hit.chunk.index == 0 and start in (None, 0)


def _stitched(chunks: list[Hit]) -> str | None:
    """The text chunks 0..n-1 cover, placed by their citation offsets (None: a gap)."""
    text = ""
    for position, hit in enumerate(chunks):
        citation, piece = hit.citation, hit.text or ""
        if hit.chunk is None or hit.chunk.index != position or citation is None:
            return None
        start, end = citation.start, citation.end
        if start is None or end is None or end - start != len(piece) or start > len(text):
            return None
        overlap = len(text) - start
        if text[start:][: len(piece)] != piece[:overlap]:
            return None
        text += piece[overlap:]
    return text


def _retrieved(hit: Hit) -> Document:
    """A ranked hit: the stored Document plus its score and the RCP fields in ``meta``."""
    return Document(id=_document_id(hit), content=hit.text, meta=hit_metadata(hit), score=hit.score)


@contextmanager
def _store_errors() -> Iterator[None]:
    """RCP refusals in Haystack's terms: a filter is a FilterError, the rest a store error."""
    try:
        yield
    except RCPError as error:
        if error.code == ErrorCode.INVALID_PARAMS and _about_filter(error):
            raise FilterError(str(error)) from error
        raise DocumentStoreError(f"RCP server refused the call: {error}") from error


def _about_filter(error: RCPError) -> bool:
    data = error.data if isinstance(error.data, Mapping) else {}
    field = data.get("field")
    return isinstance(field, str) and field.startswith("filter")


# --- Haystack filters → §8 ---

_COMPARISONS: dict[str, str] = {
    "==": "eq",
    "!=": "ne",
    ">": "gt",
    ">=": "gte",
    "<": "lt",
    "<=": "lte",
    "in": "in",
    "not in": "nin",
}
_ORDERED = frozenset({">", ">=", "<", "<="})


def to_rcp_filter(filters: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A Haystack filter dict as a §8 tree; what §8 cannot say is a FilterError."""
    if not filters:
        return None
    return _node(filters)


def _node(node: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(node, Mapping) or "operator" not in node:
        raise FilterError("every filter needs an `operator`")
    if "conditions" in node:
        return _logic(node)
    if "field" not in node or "value" not in node:
        raise FilterError("a comparison filter needs `field`, `operator` and `value`")
    return _comparison(str(node["field"]), str(node["operator"]), node["value"])


def _logic(node: Mapping[str, Any]) -> dict[str, Any]:
    operator = str(node["operator"]).upper()
    conditions = [_node(item) for item in node["conditions"]]
    if not conditions:
        raise FilterError(f"`{operator}` needs at least one condition (§8)")
    if operator == "NOT":
        return {"not": conditions[0] if len(conditions) == 1 else {"and": conditions}}
    if operator not in ("AND", "OR"):
        raise FilterError(f"unknown logical operator `{operator}`")
    return {operator.lower(): conditions}


def _comparison(field: str, operator: str, value: Any) -> dict[str, Any]:
    if not field.startswith("meta."):
        raise FilterError(f"RCP filters metadata fields only (§8), not `{field}`")
    name = field.removeprefix("meta.")
    if operator in ("==", "!=") and value is None:
        return {"field": name, "op": "exists", "value": operator == "!="}
    op = _COMPARISONS.get(operator)
    if op is None:
        raise FilterError(f"unknown comparison operator `{operator}`")
    if operator in ("in", "not in") and not isinstance(value, list):
        raise FilterError(f"`{operator}` takes a list value")
    if operator in _ORDERED and (value is None or isinstance(value, list | dict | bool)):
        raise FilterError(f"`{operator}` takes a number or a date, not {value!r}")
    return {"field": name, "op": op, "value": value}
