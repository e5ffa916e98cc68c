"""LlamaIndex: a retriever and a vector store over any RCP server (``rcpkit[llamaindex]``).

>>> retriever = RCPRetriever(Connection.http("http://127.0.0.1:8080/rcp"), similarity_top_k=5)
>>> retriever = RCPRetriever(url="http://127.0.0.1:8080/rcp", token="…")   # the same, shorthand
>>> nodes = retriever.retrieve("reciprocal rank fusion")          # list[NodeWithScore]
>>> retriever = RCPRetriever(index="./idx")     # in process, no server (``rcpkit.open``)
>>> store = RCPVectorStore(Connection.stdio(["rcpkit", "serve", "--index", "./index"]))
>>> index = VectorStoreIndex.from_documents(
...     documents, storage_context=StorageContext.from_defaults(vector_store=store))

An index with its own model embeds (``is_embedding_query`` is False): it never
needs an embedding model for queries, and the vectors LlamaIndex computes for
inserted nodes are not sent. An index of your own vectors (``rcpkit.open(...,
vectors=N)``) takes the embed model's vectors instead: the nodes' with them, the
query's as ``retrieve``'s ``vector``. Which one it is the index says (its
``embed.identity``), in process or over a server, when LlamaIndex first asks.
A node's citation offsets become its ``start_char_idx`` / ``end_char_idx`` and
its SOURCE relationship; the full citation, score, confidence and trust are in
``node.metadata``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import (
    BaseNode,
    MetadataMode,
    NodeRelationship,
    NodeWithScore,
    QueryBundle,
    RelatedNodeInfo,
    TextNode,
)
from llama_index.core.vector_stores.types import (
    BasePydanticVectorStore,
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
    VectorStoreQueryMode,
    VectorStoreQueryResult,
)
from pydantic import PrivateAttr

from rcpkit.integrations._connect import Connection
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
from rcpkit.protocol.messages import RetrieveMode

__all__ = ["RCPRetriever", "RCPVectorStore", "to_rcp_filter"]

# Metadata keys this module writes beside a node's own (never sent back as node metadata).
_REF_DOC_KEY = "ref_doc_id"
_RCP_KEYS = frozenset(
    {"id", "score", "confidence", "doc_id", "chunk_index", "unit", "citation", "source", "trust"}
)


class RCPRetriever(BaseRetriever):
    """``NodeWithScore`` from an RCP server's ``retrieve`` (§7.7), sync or native async."""

    def __init__(
        self,
        connection: Connection | None = None,
        *,
        similarity_top_k: int = 4,
        filters: MetadataFilters | None = None,
        options: Passthrough | None = None,
        command: Sequence[str] | None = None,
        url: str | None = None,
        token: str | None = None,
        registry: str | None = None,
        engine: str | None = None,
        timeout: float | None = 60.0,
        index: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        to_rcp_filter(filters)  # a filter that cannot be sent is refused here, not per call
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
        self.similarity_top_k = similarity_top_k
        self.filters = filters
        self.options = options or Passthrough()

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        tree = to_rcp_filter(self.filters)
        hits = retrieve(
            self.connection, query_bundle.query_str, self.similarity_top_k, tree, self.options
        )
        return [node_with_score(hit) for hit in hits]

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        tree = to_rcp_filter(self.filters)
        hits = await retrieve_async(
            self.connection, query_bundle.query_str, self.similarity_top_k, tree, self.options
        )
        return [node_with_score(hit) for hit in hits]


class RCPVectorStore(BasePydanticVectorStore):
    """A LlamaIndex vector store whose writes are ``index/add`` and reads ``retrieve``."""

    stores_text: bool = True
    # None: the index decides at first read (see _embedding_query below the class).
    is_embedding_query: bool | None = None  # type: ignore[assignment]
    flat_metadata: bool = True

    _connection: Connection = PrivateAttr()

    def __init__(
        self,
        connection: Connection | None = None,
        *,
        command: Sequence[str] | None = None,
        url: str | None = None,
        token: str | None = None,
        registry: str | None = None,
        engine: str | None = None,
        timeout: float | None = 60.0,
        index: Any = None,
        **kwargs: Any,
    ) -> None:
        """Over ``connection``, or one opened from ``command``, ``url`` or ``registry``;
        ``index`` (a folder, a database URL or an ``rcpkit.Index``): in process."""
        super().__init__(**kwargs)
        self._connection = connection_from(
            connection,
            command=command,
            url=url,
            token=token,
            registry=registry,
            engine=engine,
            timeout=timeout,
            index=index,
        )

    @classmethod
    def class_name(cls) -> str:
        return "RCPVectorStore"

    @property
    def client(self) -> Connection:
        return self._connection

    def add(self, nodes: Sequence[BaseNode], **add_kwargs: Any) -> list[str]:
        """§7.10 ``index/add``, one RCP document per node (its id is the node id)."""
        if not nodes:
            return []
        own = holds_own_vectors(self._connection)  # else the index embeds the text itself
        documents = [_rcp_document(node, own) for node in nodes]
        result = self._connection.call(lambda client: client.index_add(documents, chunk=False))
        return list(result.ids)

    def delete(self, ref_doc_id: str, **delete_kwargs: Any) -> None:
        """Delete every node of the source document ``ref_doc_id`` (§7.11).

        The nodes are listed (a paged dense retrieve) and matched on their
        ``ref_doc_id``: only those a §8 filter on ``ref_doc_id`` selects when the
        index can filter on it (an index in process declares it at first sight),
        else the whole index. ``None`` names no document and deletes nothing, as in
        SimpleVectorStore: it must not match every document written without one.
        """
        if not isinstance(ref_doc_id, str):
            return
        ids = sorted(
            {
                hit.chunk.doc_id if hit.chunk is not None else str(hit.id)
                for hit in every_hit(
                    self._connection, _ref_doc_filter(self._connection, ref_doc_id)
                )
                if (hit.meta or {}).get(_REF_DOC_KEY) == ref_doc_id  # never more than asked
            }
        )
        self.delete_nodes(ids)

    def delete_nodes(
        self,
        node_ids: list[str] | None = None,
        filters: MetadataFilters | None = None,
        **delete_kwargs: Any,
    ) -> None:
        """§7.11 ``index/delete`` of ``node_ids``; without them, nothing is deleted.

        SimpleVectorStore reads no ids as "every node"; an RCP index also holds
        what other clients wrote, so here that is a ValueError, never a wipe.
        """
        if filters is not None:
            raise ValueError("RCP `index/delete` takes ids; give `node_ids`, not `filters`")
        if node_ids is None:
            raise ValueError("give the `node_ids` to delete; this store never deletes them all")
        if node_ids:
            ids = list(node_ids)
            self._connection.call(lambda client: client.index_delete(ids))

    def query(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        """``retrieve`` with the query's text, top_k, mode, alpha and filters, and on an
        index of your own vectors the query's embedding for the dense arm."""
        text, options = self._request(query)
        tree = to_rcp_filter(query.filters)
        tree = _and(tree, _ids_filter(query))
        hits = retrieve(self._connection, text, query.similarity_top_k, tree, options)
        nodes = [node_with_score(hit) for hit in hits]
        return VectorStoreQueryResult(
            nodes=[item.node for item in nodes],
            similarities=[item.score or 0.0 for item in nodes],
            ids=[item.node.node_id for item in nodes],
        )

    async def aquery(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        text, options = self._request(query)
        tree = _and(to_rcp_filter(query.filters), _ids_filter(query))
        hits = await retrieve_async(self._connection, text, query.similarity_top_k, tree, options)
        nodes = [node_with_score(hit) for hit in hits]
        return VectorStoreQueryResult(
            nodes=[item.node for item in nodes],
            similarities=[item.score or 0.0 for item in nodes],
            ids=[item.node.node_id for item in nodes],
        )

    def _request(self, query: VectorStoreQuery) -> tuple[str, Passthrough]:
        """The query text and options; the embedding rides along on an index of own vectors."""
        options = _passthrough(query)
        vector = query_vector(self._connection, query.query_embedding)
        if vector is not None:
            options = replace(options, vector=vector)
        if query.query_str:
            return query.query_str, options
        if vector is None:
            raise ValueError("an RCP server embeds the query itself: `query_str` is required")
        # §7.7 wants a non-empty query; by its vector alone the search is dense.
        return PROBE_QUERY, replace(options, mode="dense", fusion=None)


def _embedding_query(store: RCPVectorStore) -> bool:
    """Whether LlamaIndex must embed the query: on an index of your own vectors only.

    Asked of the index (its advertised ``embed.identity``) when the framework first
    reads it, at the first retrieve: a store over a server is built without
    connecting, and its capabilities are fixed for the session (§13.2).
    """
    given = store.__dict__.get("is_embedding_query")
    if given is None:
        given = holds_own_vectors(store.client)
        store.__dict__["is_embedding_query"] = given
    return bool(given)


def _set_embedding_query(store: RCPVectorStore, value: bool | None) -> None:
    store.__dict__["is_embedding_query"] = value


# A property installed after pydantic built the class: the field stays a field (it is
# validated, dumped, given to __init__), the read goes through the property, which
# outranks the instance's __dict__ as every data descriptor does.
RCPVectorStore.is_embedding_query = property(  # type: ignore[assignment]
    _embedding_query, _set_embedding_query
)


def node_with_score(hit: Hit) -> NodeWithScore:
    """A hit as a scored TextNode: citation offsets as char indices and SOURCE relationship."""
    metadata = hit_metadata(hit)
    own = {key: value for key, value in metadata.items() if key not in _RCP_KEYS}
    rcp = {key: value for key, value in metadata.items() if key in _RCP_KEYS}
    node_id = hit.chunk.doc_id if hit.chunk is not None else str(hit.id)
    node = TextNode(id_=node_id, text=hit.text or "", metadata={**own, **rcp})
    # The RCP fields describe the hit, not the text: keep them out of embeddings and prompts.
    node.excluded_embed_metadata_keys = sorted(rcp)
    node.excluded_llm_metadata_keys = sorted(rcp)
    citation = hit.citation
    if citation is not None:
        node.start_char_idx = citation.start
        node.end_char_idx = citation.end
        extra = {"uri": citation.uri, "page": citation.page, "title": citation.title}
        node.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(
            node_id=str(own.get(_REF_DOC_KEY, citation.source)),
            metadata={key: value for key, value in extra.items() if value is not None},
        )
    return NodeWithScore(node=node, score=hit.score)


def _ref_doc_filter(connection: Connection, ref_doc_id: str) -> dict[str, Any] | None:
    """§8 ``ref_doc_id = …`` when the index filters on that field as a keyword, else None."""
    if connection.filter_fields().get(_REF_DOC_KEY) != "keyword":
        return None
    return {"field": _REF_DOC_KEY, "op": "eq", "value": ref_doc_id}


def _rcp_document(node: BaseNode, own_vectors: bool = False) -> dict[str, Any]:
    metadata = {key: _scalar(value) for key, value in node.metadata.items()}
    if node.ref_doc_id is not None:
        metadata[_REF_DOC_KEY] = node.ref_doc_id
    document: dict[str, Any] = {
        "id": node.node_id,
        "text": node.get_content(metadata_mode=MetadataMode.NONE),
        "meta": metadata,
    }
    if own_vectors and node.embedding is not None:  # the index takes the embed model's vectors
        document["vector"] = list(node.embedding)
    return document


def _scalar(value: object) -> object:
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, list) and all(isinstance(item, str | int | float) for item in value):
        return value
    return json.dumps(value, default=str)  # flat metadata, as LlamaIndex's stores keep it


_MODES: dict[VectorStoreQueryMode, RetrieveMode] = {
    VectorStoreQueryMode.DEFAULT: "dense",
    VectorStoreQueryMode.SPARSE: "sparse",
    VectorStoreQueryMode.TEXT_SEARCH: "sparse",
    VectorStoreQueryMode.HYBRID: "hybrid",
    VectorStoreQueryMode.SEMANTIC_HYBRID: "hybrid",
}


def _passthrough(query: VectorStoreQuery) -> Passthrough:
    mode = _MODES.get(query.mode)
    if mode is None:
        raise ValueError(f"query mode `{query.mode.value}` has no RCP retrieve mode (§7.7)")
    # LlamaIndex's alpha: 0 is all keyword, 1 all vector; §7.7 convex alpha weighs the
    # dense arm the same way.
    fusion = {"method": "convex", "alpha": query.alpha} if query.alpha is not None else None
    return Passthrough(mode=mode, fusion=fusion if mode == "hybrid" else None)


def _ids_filter(query: VectorStoreQuery) -> dict[str, Any] | None:
    if query.doc_ids or query.node_ids:
        raise ValueError("RCP filters name advertised metadata fields only (§8), not node ids")
    return None


def _and(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any] | None:
    if left is None or right is None:
        return left or right
    return {"and": [left, right]}


_OPERATORS: dict[FilterOperator, str] = {
    FilterOperator.EQ: "eq",
    FilterOperator.NE: "ne",
    FilterOperator.GT: "gt",
    FilterOperator.GTE: "gte",
    FilterOperator.LT: "lt",
    FilterOperator.LTE: "lte",
    FilterOperator.IN: "in",
    FilterOperator.NIN: "nin",
    FilterOperator.CONTAINS: "contains",
    FilterOperator.TEXT_MATCH: "contains",
}


def to_rcp_filter(filters: MetadataFilters | None) -> dict[str, Any] | None:
    """LlamaIndex ``MetadataFilters`` as a §8 tree (an operator §8 lacks is a ValueError)."""
    if filters is None:
        return None
    if not isinstance(filters, MetadataFilters):
        raise ValueError(
            "`filters` must be a llama_index MetadataFilters, such as "
            'MetadataFilters(filters=[MetadataFilter(key="lang", value="en")]), '
            f"not a {type(filters).__name__} ({filters!r})"
        )
    if not filters.filters:
        return None
    present = [
        _group(item) if isinstance(item, MetadataFilters) else _clause(item)
        for item in filters.filters
    ]
    condition = filters.condition or FilterCondition.AND
    if condition == FilterCondition.NOT:
        return {"not": {"and": present} if len(present) > 1 else present[0]}
    if len(present) == 1:
        return present[0]
    return {condition.value: present}


def _group(filters: MetadataFilters) -> dict[str, Any]:
    tree = to_rcp_filter(filters)
    if tree is None:  # §8 has no empty `and`/`or`/`not`
        raise ValueError("an empty MetadataFilters inside another says nothing: leave it out")
    return tree


def _clause(item: MetadataFilter) -> dict[str, Any]:
    if item.operator == FilterOperator.IS_EMPTY:
        return {"field": item.key, "op": "exists", "value": False}
    if item.operator in (FilterOperator.ANY, FilterOperator.ALL):
        values = item.value if isinstance(item.value, list) else [item.value]
        each = [{"field": item.key, "op": "contains", "value": value} for value in values]
        return {"or" if item.operator == FilterOperator.ANY else "and": each}
    operator = _OPERATORS.get(item.operator)
    if operator is None:
        raise ValueError(f"filter operator `{item.operator.value}` has no §8 equivalent")
    return {"field": item.key, "op": operator, "value": item.value}
