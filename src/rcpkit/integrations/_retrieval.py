"""What every integration shares: the retrieve options it passes through and a hit's metadata."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rcpkit.client import CapabilityMissing, Client, SyncClient
from rcpkit.integrations._connect import Connection
from rcpkit.protocol import messages as m
from rcpkit.protocol.content import Hit

__all__ = [
    "PROBE_QUERY",
    "Passthrough",
    "every_hit",
    "hit_metadata",
    "holds_own_vectors",
    "listing_vector",
    "query_vector",
    "retrieve",
    "retrieve_async",
]

Filter = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Passthrough:
    """The §7.7 options an integration forwards unchanged (None: the server's default)."""

    mode: m.RetrieveMode | None = None
    fusion: Mapping[str, Any] | None = None
    rerank: Mapping[str, Any] | bool | None = None
    token_budget: int | None = None
    candidate_k: int | None = None
    min_score: float | None = None
    unit: str | None = None
    # The query's own vector (the framework's query embedding) on an index of own vectors.
    vector: tuple[float, ...] | None = None

    def arguments(self, k: int, filter: Filter | None) -> dict[str, Any]:
        given = {
            "k": k,
            "filter": dict(filter) if filter is not None else None,
            "mode": self.mode,
            "fusion": dict(self.fusion) if isinstance(self.fusion, Mapping) else None,
            "rerank": dict(self.rerank) if isinstance(self.rerank, Mapping) else self.rerank,
            "token_budget": self.token_budget,
            "candidate_k": self.candidate_k,
            "min_score": self.min_score,
            "unit": self.unit,
            "vector": list(self.vector) if self.vector is not None else None,
        }
        return {name: value for name, value in given.items() if value is not None}


def retrieve(
    connection: Connection, query: str, k: int, filter: Filter | None, options: Passthrough
) -> list[Hit]:
    """§7.7 ``retrieve`` on the blocking path.

    The client gates the method and every option before any I/O (§14.4): a server
    without ``retrieve``, or without the mode or filter field asked for, raises
    CapabilityMissing or OptionUnsupported naming it, never an empty list.
    """
    arguments = options.arguments(k, filter)

    def work(client: SyncClient) -> list[Hit]:
        return client.retrieve(query, **arguments).hits

    return connection.call(work)


async def retrieve_async(
    connection: Connection, query: str, k: int, filter: Filter | None, options: Passthrough
) -> list[Hit]:
    """The same call awaited (the native async client, on the connection's loop)."""
    arguments = options.arguments(k, filter)

    async def work(client: Client) -> list[Hit]:
        return (await client.retrieve(query, **arguments)).hits

    return await connection.run(work)


# RCP has no "list documents" method. A dense retrieve ranks every chunk, and its cursor
# (§10) pages on past maxK, so paging through one to its end lists the index. The query
# only orders the pages; any non-empty text will do (§7.7 refuses an empty one).
PROBE_QUERY = "*"


def every_hit(
    connection: Connection, filter: Filter | None, *, page: int = 100, unit: str | None = None
) -> list[Hit]:
    """Every hit a paged dense ``retrieve`` yields (O(index size): for stores' list/count).

    Needs ``retrieve`` with the ``dense`` mode and ``pagination``; a server without
    either raises CapabilityMissing naming it rather than listing nothing. ``unit``:
    the §7.7.2 unit to list (the server's default, chunks, when None).
    """
    block = connection.require("retrieve", "retrieve")
    modes = block.get("modes")
    if isinstance(modes, list) and "dense" not in modes:
        raise CapabilityMissing("retrieve", "retrieve.modes: dense")
    connection.require("retrieve", "pagination")
    maximum = block.get("maxK")
    size = min(page, maximum) if isinstance(maximum, int) and maximum > 0 else page
    # An index of own vectors cannot embed the probe text: any vector of its dimension
    # ranks every chunk as well (the order does not matter to a listing).
    own = listing_vector(connection)
    arguments = Passthrough(mode="dense", unit=unit, vector=own).arguments(size, filter)
    hits: list[Hit] = []
    cursor: str | None = None
    while True:
        page_arguments = {**arguments, "cursor": cursor} if cursor else arguments
        result = connection.client.retrieve(PROBE_QUERY, **page_arguments)
        hits.extend(result.hits)
        cursor = result.next_cursor
        if not cursor or not result.hits:
            return hits


def hit_metadata(hit: Hit) -> dict[str, Any]:
    """A hit's server metadata plus its RCP fields: id, score, confidence, citation, trust.

    The RCP fields win over a metadata key of the same name.
    """
    metadata: dict[str, Any] = dict(hit.meta or {})
    metadata["id"] = hit.id
    metadata["score"] = hit.score
    if hit.confidence is not None:
        metadata["confidence"] = hit.confidence
    if hit.chunk is not None:
        metadata["doc_id"] = hit.chunk.doc_id
        metadata["chunk_index"] = hit.chunk.index
    if hit.unit is not None:
        metadata["unit"] = hit.unit
    if hit.citation is not None:
        citation = {
            name: getattr(hit.citation, name)
            for name in ("source", "uri", "title", "start", "end", "page")
            if getattr(hit.citation, name) is not None
        }
        metadata["citation"] = citation
        metadata["source"] = hit.citation.source
    if hit.trust is not None:
        metadata["trust"] = {
            name: getattr(hit.trust, name)
            for name in ("level", "score", "injection_suspected", "sanitized")
            if getattr(hit.trust, name) is not None
        }
    return metadata


def holds_own_vectors(connection: Connection) -> bool:
    """Whether the index takes the caller's own vectors (its ``embed.identity`` says
    ``vectors:…``): then a framework's own embeddings go with its documents."""
    block = connection.capabilities.get("embed")
    identity = block.get("identity") if isinstance(block, Mapping) else None
    return isinstance(identity, str) and identity.startswith("vectors:")


def listing_vector(connection: Connection) -> tuple[float, ...] | None:
    """A query vector for listing an index of own vectors (a unit axis); None for another."""
    if not holds_own_vectors(connection):
        return None
    block = connection.capabilities.get("embed")
    dimension = block.get("dimension") if isinstance(block, Mapping) else None
    if not isinstance(dimension, int) or dimension < 1:
        raise CapabilityMissing("retrieve", "embed.dimension")
    return (1.0,) + (0.0,) * (dimension - 1)


def query_vector(connection: Connection, embedding: Any) -> tuple[float, ...] | None:
    """A framework's query embedding as the query's own vector, on an index of own
    vectors; None on an index that embeds the query text itself (its own model)."""
    if embedding is None or not holds_own_vectors(connection):
        return None
    return tuple(float(value) for value in embedding)
