"""§7.7.2 graph units: knowledge-graph results as hits, cited like any retrieve hit."""

from __future__ import annotations

from collections.abc import Sequence

from rcpkit.engine.engine import Engine
from rcpkit.engine.graph import GraphHit
from rcpkit.engine.graph.tenants import provenance_of
from rcpkit.engine.retrieve.citations import citation_of
from rcpkit.protocol.content import Chunk, Hit

__all__ = ["graph_hits"]


def graph_hits(engine: Engine, hits: Sequence[GraphHit]) -> list[Hit]:
    """Graph results as Hits; chunk hits carry the chunk's citation like any retrieve hit."""
    rows = engine.store.fetch([h.chunk_keys[0] for h in hits if h.unit == "chunk" and h.chunk_keys])
    out = []
    for hit in hits:
        row = rows.get(hit.chunk_keys[0]) if hit.unit == "chunk" and hit.chunk_keys else None
        out.append(
            Hit(
                id=hit.id,
                score=hit.score,
                text=row.text if row is not None else hit.text,
                unit=hit.unit,
                provenance=provenance_of(hit),
                citation=citation_of(row) if row is not None else None,
                chunk=Chunk(doc_id=row.doc_id, index=row.index) if row is not None else None,
            )
        )
    return out
