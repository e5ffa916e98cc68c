"""Pack + cite (§3.1, §7.7): units, hits with citations, confidence and trust signals."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np

from rcpkit.engine.engine import Engine
from rcpkit.engine.models import encode_f32_base64
from rcpkit.engine.query import Query
from rcpkit.engine.request import EngineRequest
from rcpkit.engine.retrieve.citations import citation_of, hit_meta
from rcpkit.engine.retrieve.recall import Recalled
from rcpkit.engine.retrieve.stages import Candidate
from rcpkit.engine.retrieve.trust import screen, trust_level
from rcpkit.engine.store.base import ChunkRow
from rcpkit.protocol.content import Chunk, Hit, Trust

__all__ = ["UNIT_KEYS", "build_hits", "merge_units"]

# §7.7.2: the retrieval unit a chunk belongs to, and the hit id of that unit.
UNIT_KEYS: dict[str, Callable[[ChunkRow], str]] = {
    "chunk": lambda row: row.chunk_id,
    "passage": lambda row: row.chunk_id,
    "document": lambda row: row.doc_id,
    "page": lambda row: f"{row.doc_id}#p{row.page}" if row.page else row.doc_id,
}


def merge_units(
    candidates: Sequence[Candidate], rows: dict[int, ChunkRow], unit: str
) -> list[Candidate]:
    """One candidate per unit, its best chunk's: that chunk's key, score and scores.

    The unit's body is read for the page alone (``unit_bodies``): the document's
    own text, never its chunks joined, which would repeat each overlap.
    """
    unit_of = UNIT_KEYS[unit]
    merged: dict[str, Candidate] = {}
    for candidate in candidates:
        key = unit_of(rows[candidate.key])
        if key not in merged:
            merged[key] = Candidate(candidate.key, candidate.score, dict(candidate.scores))
    return list(merged.values())


def build_hits(
    engine: Engine,
    page: Sequence[Candidate],
    rows: dict[int, ChunkRow],
    query: Query,
    recalled: Recalled,
    ctx: EngineRequest,
) -> list[Hit]:
    unit = query.unit if query.unit in UNIT_KEYS else "chunk"
    calibration = engine.calibrate(ctx.tenant)  # §15.6: the tenant's own corpus
    hits = []
    for candidate in page:
        row = rows[candidate.key]
        vector = recalled.vectors.get(candidate.key)
        cosine = float(vector @ recalled.query_vector) if vector is not None else -1.0
        checked = screen(candidate.text if candidate.text is not None else row.text)
        hits.append(
            Hit(
                id=UNIT_KEYS[unit](row),
                score=candidate.score,
                confidence=round(calibration.confidence(cosine), 6),
                text=checked.text if query.include_text else None,
                modality="code" if row.modality == "code" else _image_or_text(row.modality),
                unit="chunk" if unit == "passage" else unit,
                meta=hit_meta(row, candidate.span),
                vector=_vector(vector, query),
                scores=candidate.scores,
                citation=citation_of(row, candidate.span),
                chunk=Chunk(doc_id=row.doc_id, index=row.index, context=row.context),
                # §15.2: nothing is vouched for unless its source is configured as trusted.
                trust=Trust(
                    level=trust_level(row.origin, row.uri, engine.config.trusted_sources),  # type: ignore[arg-type]
                    injection_suspected=checked.injection_suspected,
                    sanitized=checked.sanitized or None,
                ),
            )
        )
    ctx.check_cancelled()
    return hits


def _image_or_text(modality: str) -> Literal["image", "text"]:
    # Images of index/add documents are stored as their OCR text, modality "image".
    return "image" if modality == "image" else "text"


def _vector(vector: np.ndarray | None, query: Query) -> list[float] | str | None:
    if vector is None or not query.include_vectors:
        return None
    return encode_f32_base64(vector) if query.encoding == "f32-base64" else vector.tolist()
