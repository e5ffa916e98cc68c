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
from rcpkit.engine.store.base import ChunkRow, Store
from rcpkit.engine.store.snapshot import fetch_rows
from rcpkit.protocol.content import Chunk, Hit, Trust

__all__ = ["UNIT_KEYS", "build_hits", "merge_units", "units_head"]

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


def units_head(
    store: Store, candidates: Sequence[Candidate], unit: str, units: int
) -> tuple[list[Candidate], dict[int, ChunkRow]]:
    """The first candidates that make ``units`` distinct units (all, if fewer), and their rows.

    A unit ranks by its best chunk, the first of its chunks in ``candidates``, so the
    first ``units`` units of this head are those of the whole list: the page, and one
    more to tell whether a next page exists (§10). A document page's pool is twice
    its depth in chunks per arm (``recall_depth``); reading every pooled chunk's row
    to find its document cost the default 1.2-1.3x its p50 at k 100 (issue 50). Read
    in steps of as many chunks as units are still missing; a chunk collected since
    recall is left out, as a whole read leaves it.
    """
    unit_of = UNIT_KEYS[unit]
    rows: dict[int, ChunkRow] = {}
    seen: set[str] = set()
    read = 0
    while read < len(candidates) and len(seen) < units:
        step = candidates[read : read + units - len(seen)]
        rows.update(fetch_rows(store, [c.key for c in step]))
        seen.update(unit_of(rows[c.key]) for c in step if c.key in rows)
        read += len(step)
    return [c for c in candidates[:read] if c.key in rows], rows


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
