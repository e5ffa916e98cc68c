"""The default retrieve's proximity stage: candidates holding the query's words together.

Issue 33: BM25 and the dense arm both score a passage as a bag of terms; a
passage where "heat transfer" occurs as a phrase and one where "heat" and
"transfer" are a paragraph apart score alike. After fusion (and the feedback
pass), the first ``DEPTH`` candidates get SDM's unordered-window evidence
(``rcpkit.engine.scoring.proximity``): each pair of neighbouring query terms that
occurs within ``WINDOW`` analysed positions in the chunk's text. The pairs'
score is divided by the most the query's pairs could score (every count
saturated), so it is a share in ``[0, 1)`` that does not depend on the list —
a rerank of these candidates gives them the same share — and the candidate's
score becomes ``(fused + w · share) / (1 + w)``, ``w`` =
``[engine] proximity_weight``.

Measured in ``benchmarks/quality_lab.py`` over the seven collections of
docs/quality.md (dev halves, nDCG@10 ÷ BM25; BENCHMARKS.md): ``w`` 0.15,
window 8 raises every collection (Cranfield 1.265 → 1.291, man-long, the
worst, 1.097 → 1.109); normalising by the best candidate's score instead
lowered the title-only man-short.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from rcpkit.engine.engine import Engine
from rcpkit.engine.query import Query
from rcpkit.engine.retrieve.bodies import is_code, remember_bodies
from rcpkit.engine.retrieve.stages import Candidate
from rcpkit.engine.scoring.bm25 import tokens
from rcpkit.engine.scoring.proximity import (
    DEPTH,
    Positions,
    blend,
    pair_shares,
    pair_tokens,
    positions_of,
    query_pairs,
)
from rcpkit.engine.store.snapshot import fetch_rows
from rcpkit.engine.text.analysis import stored_terms

__all__ = ["DEPTH", "applies", "boosted", "shares"]


def applies(engine: Engine, query: Query) -> bool:
    """Whether this request gets the stage: a default hybrid retrieve, the weight above 0."""
    plain = query.effective_mode == "hybrid" and query.fusion is None and not query.rewrite
    return plain and engine.config.proximity_weight > 0


def boosted(
    engine: Engine,
    text: str,
    candidates: Sequence[Candidate],
    version: int,
    tenant: str | None,
) -> list[Candidate]:
    """``candidates`` with the first ``DEPTH`` rescored by proximity and re-ordered."""
    found = shares(engine, text, [c.key for c in candidates[:DEPTH]], version, tenant)
    if found is None:
        return list(candidates)
    weight = engine.config.proximity_weight
    out = []
    for candidate in candidates:  # those past DEPTH have no share: a share only adds
        share = found.get(candidate.key, 0.0)
        score = blend(candidate.score, share, weight)
        # Hit.scores shows each stage's part (§7.7): the share, where there is one.
        scores = {**candidate.scores, "fused": score} | ({"proximity": share} if share else {})
        out.append(Candidate(candidate.key, score, scores, candidate.text))
    return sorted(out[:DEPTH], key=lambda c: (-c.score, c.key)) + out[DEPTH:]


def shares(
    engine: Engine, text: str, keys: Sequence[int], version: int, tenant: str | None
) -> dict[int, float] | None:
    """Each row's proximity share for ``text`` in ``[0, 1)``; None: the query has no pair."""
    pairs = query_pairs(text)
    if not pairs:
        return None
    statistics = engine.store.index.lexical_statistics(pair_tokens(pairs), version, tenant)
    documents, _, frequency = statistics
    rows = fetch_rows(engine.store, list(keys))
    remember_bodies(engine.store, rows)
    held = [key for key in keys if key in rows]
    passages = [_positions(rows[key].text, is_code(rows[key])) for key in held]
    found = pair_shares(pairs, passages, documents, frequency, engine.store.bm25.k1)
    return dict(zip(held, found, strict=True))


@lru_cache(maxsize=4096)
def _positions(text: str, code: bool) -> Positions:
    """A chunk's body tokens as the indexer made them (code split as identifiers), by token.

    Keyed by the text itself, so a row rewritten under an old key is never mistaken;
    read-only once cached. Popular chunks come back query after query, and the
    feedback pass has often just analysed the same body (``stored_terms``).
    """
    return positions_of(tokens(" ".join(stored_terms(text, code))))
