"""GraphRAG in the engine (§7.9, §7.7.2 graph units): one knowledge graph per tenant.

The graph is derived data, kept in step with the index: every committed write
adds the new chunks' entities and removes the retired chunks' (under the
engine's write lock, after the commit). Graphs are per tenant, so entities,
communities and summaries never mix tenants' text. The graph follows the
latest version only; a retrieve pinned to an older version does not route
through it.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Mapping, Sequence

from rcpkit.engine.graph import (
    GraphHit,
    KnowledgeGraph,
    RegexExtractor,
    SpacyExtractor,
)
from rcpkit.engine.graph.storage import GraphStorage
from rcpkit.engine.store.base import ChunkRow
from rcpkit.protocol.content import Edge, Provenance

__all__ = ["EXTRACTORS", "Graphs", "graph_name", "provenance_of"]

EXTRACTORS = {"spacy": SpacyExtractor, "regex": RegexExtractor}


class Graphs:
    """The tenants' graphs, each opened on first use where the backend keeps it.

    ``storage`` makes a tenant's storage from its graph name and the extractor's
    identity (``rcpkit.engine.backend.Backend.graph_storage``); ``fetch`` reads
    committed chunks by key (the store's).
    """

    def __init__(
        self,
        storage: Callable[[str, str], GraphStorage],
        fetch: Callable[[list[int]], Mapping[int, ChunkRow]],
        extractor: str,
    ) -> None:
        self._storage = storage
        self._fetch = fetch
        self._extractor = EXTRACTORS[extractor]()
        self._lock = threading.Lock()
        self._graphs: dict[str, KnowledgeGraph] = {}

    def of(self, tenant: str | None) -> KnowledgeGraph:
        name = graph_name(tenant)
        with self._lock:
            if name not in self._graphs:
                storage = self._storage(name, self._extractor.identity)
                self._graphs[name] = KnowledgeGraph(storage, self._extractor)
            return self._graphs[name]

    def apply(self, tenant: str | None, added: Sequence[int], removed: Sequence[int]) -> None:
        """Bring the tenant's graph in step with one commit."""
        graph = self.of(tenant)
        if removed:
            graph.remove_chunks(list(removed))
        if added:
            rows = self._fetch(list(added))
            graph.add_chunks(
                [(key, rows[key].chunk_id, rows[key].text) for key in added if key in rows]
            )

    def close(self) -> None:
        with self._lock:
            for graph in self._graphs.values():
                graph.close()
            self._graphs.clear()


def graph_name(tenant: str | None) -> str:
    """The name of a tenant's graph: its file ``<name>.sqlite3``, its schema ``graph_<name>``."""
    return hashlib.sha256((tenant or "").encode()).hexdigest()[:16]


def provenance_of(hit: GraphHit) -> Provenance:
    """§7.7.2 provenance on the wire: the nodes, edges and path behind a graph hit."""
    lineage = hit.provenance
    return Provenance(
        nodes=list(lineage.nodes) or None,
        edges=[Edge(src=e.src, dst=e.dst, weight=e.weight) for e in lineage.edges] or None,
        path=list(lineage.path) or None,
    )
