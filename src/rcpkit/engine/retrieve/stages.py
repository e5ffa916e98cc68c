"""Pure post-recall stages over candidate lists: MMR, recency decay, budget packing.

Each takes and returns candidates best-first; ties break on the smaller key,
so identical inputs give identical outputs (§7.7.1 determinism).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

__all__ = ["Candidate", "mmr", "pack_to_budget", "recency_decay"]

Vector = npt.NDArray[np.float32]
_DAY_MS = 86_400_000


@dataclass(slots=True)
class Candidate:
    key: int
    score: float
    scores: dict[str, float] = field(default_factory=dict)
    text: str | None = None  # a long unit's body (§7.7.2 document, page); else the chunk's
    span: tuple[int, int] | None = None  # the [start, end) of its document ``text`` is


def mmr(
    candidates: Sequence[Candidate], vectors: Mapping[int, Vector], lambda_: float, k: int
) -> list[Candidate]:
    """Maximal Marginal Relevance (Carbonell & Goldstein 1998) over the candidates.

    Relevance is the candidate's score min-max scaled to [0, 1] so it is
    commensurate with cosine similarity; novelty is 1 − max cosine to the picks.
    """
    pool = [c for c in candidates if c.key in vectors]
    if not pool:
        return list(candidates[:k])
    scores = np.array([c.score for c in pool])
    span = float(scores.max() - scores.min())
    relevance = (scores - scores.min()) / span if span > 0 else np.ones(len(pool))
    matrix = np.stack([vectors[c.key] for c in pool])
    similarity = matrix @ matrix.T
    chosen: list[int] = []
    closest = np.full(len(pool), -np.inf)
    remaining = list(range(len(pool)))
    while remaining and len(chosen) < k:
        penalty = np.where(np.isfinite(closest), closest, 0.0)
        value = lambda_ * relevance - (1 - lambda_) * penalty
        best = max(remaining, key=lambda i: (value[i], -pool[i].key))
        chosen.append(best)
        remaining.remove(best)
        closest = np.maximum(closest, similarity[best])
    picked = [pool[i] for i in chosen]
    for rank, candidate in enumerate(picked):
        candidate.scores["mmr"] = float(len(picked) - rank)
    return picked


def recency_decay(
    candidates: Sequence[Candidate],
    dates: Mapping[int, int | None],
    half_life_days: float,
    now_ms: int,
    floor: float,
) -> list[Candidate]:
    """Exponential decay by age: (score − floor) · 0.5^(age / half-life) + floor.

    Decaying the distance to the mode's score floor keeps the order sensible
    for cosine scores that can be negative; undated candidates keep their score.
    """
    out = []
    for candidate in candidates:
        stamp = dates.get(candidate.key)
        if stamp is not None:
            age_days = max(0.0, (now_ms - stamp) / _DAY_MS)
            factor = math.pow(0.5, age_days / half_life_days)
            candidate.score = (candidate.score - floor) * factor + floor
            candidate.scores["recency"] = factor
        out.append(candidate)
    out.sort(key=lambda c: (-c.score, c.key))
    return out


def pack_to_budget(
    texts: Sequence[str], count_tokens: Callable[[Sequence[str]], list[int]], budget: int
) -> tuple[int, int]:
    """How many leading texts fit in ``budget`` tokens, and their total (§7.7.2)."""
    total = 0
    for position, tokens in enumerate(count_tokens(texts)):
        if total + tokens > budget:
            return position, total
        total += tokens
    return len(texts), total
