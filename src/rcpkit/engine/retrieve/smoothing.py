"""The default retrieve's smoothing stage: candidates move towards their nearest fellow candidates.

Issue 33: after fusion, feedback and proximity, the best ``DEPTH`` candidates
are smoothed among themselves (``rcpkit.engine.scoring.smoothing``): each score becomes
``(1 - w) · s + w ·`` the cosine-weighted mean score of its ``NEIGHBOURS``
nearest candidates, by the vectors recall already read, ``w`` = ``[engine]
smoothing_weight``; the first is never lowered, so it stays first. Nothing is
searched or embedded again.

Measured in ``benchmarks/quality_lab.py`` over the seven collections of
docs/quality.md (dev halves, nDCG@10 ÷ BM25, chosen by the worst; BENCHMARKS.md):
``w`` 0.3, 8 neighbours, the best 75 lift the topical collections (Cranfield
1.291 → 1.325, its keyword queries 1.247 → 1.274) and hold the worst (man-long
1.109 → 1.111); every dev half rises.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from rcpkit.engine.engine import Engine
from rcpkit.engine.query import Query
from rcpkit.engine.retrieve.stages import Candidate
from rcpkit.engine.scoring.smoothing import DEPTH, smoothed_head

__all__ = ["DEPTH", "applies", "smoothed"]


def applies(engine: Engine, query: Query) -> bool:
    """Whether this request gets the stage: a default hybrid retrieve, the weight above 0."""
    plain = query.effective_mode == "hybrid" and query.fusion is None and not query.rewrite
    return plain and engine.config.smoothing_weight > 0


def smoothed(
    engine: Engine,
    candidates: Sequence[Candidate],
    vectors: Mapping[int, npt.NDArray[np.float32]],
) -> list[Candidate]:
    """``candidates`` with the best ``DEPTH`` smoothed among themselves and re-ordered."""
    before = {candidate.key: candidate.score for candidate in candidates}
    after = smoothed_head(before, vectors, engine.config.smoothing_weight)
    out = []
    for candidate in candidates:
        score = after[candidate.key]
        if score == candidate.score:
            out.append(candidate)
            continue
        # Hit.scores shows each stage's part (§7.7): what this stage added (or took).
        scores = {**candidate.scores, "fused": score, "smoothing": score - candidate.score}
        out.append(Candidate(candidate.key, score, scores, candidate.text))
    return sorted(out, key=lambda c: (-c.score, c.key))
