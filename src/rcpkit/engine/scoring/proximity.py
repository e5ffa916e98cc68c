"""Term proximity: the query's neighbouring terms found close together in a passage.

The unordered-window feature of the sequential dependence model (Metzler &
Croft 2005): a pair of neighbouring query terms scores in a passage for every
time its two terms occur within ``window`` analysed positions of each other,
the count saturated as BM25 saturates a term's (``c · (k1 + 1) / (c + k1)``)
and weighted by the pair's mean idf. Shared by the default retrieve's
proximity stage (``rcpkit.engine.retrieve.proximity``) and the hybrid rerank
(``rcpkit.engine.rerank._hybrid``), so a rerank of the engine's own candidates
scores them as `retrieve` did.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence
from itertools import pairwise

from rcpkit.engine.scoring.bm25 import query_tokens, tokens
from rcpkit.engine.text.analysis import analyze_code_many

__all__ = [
    "DEPTH",
    "WINDOW",
    "Positions",
    "blend",
    "idf_of",
    "pair_bound",
    "pair_shares",
    "pair_tokens",
    "pairs_of",
    "positions_of",
    "proximity_scores",
    "query_pairs",
]

DEPTH = 30  # the fused candidates a retrieve scores
WINDOW = 8  # analysed positions; stopwords are already out, so about a dozen words


def query_pairs(text: str) -> list[tuple[str, str]]:
    """The neighbouring pairs of a query, its identifiers split as in code.

    Not `analyze_query`'s terms: the prose form it adds for a snake_case word
    (``parse_filt``) would pair with the code forms (``parsefilt``), a pair no row
    holds together, and only lower every row's share.
    """
    terms = analyze_code_many([text])[0]
    return pairs_of([token for term in terms for token in tokens(term)])


def pair_tokens(pairs: Sequence[tuple[str, str]]) -> list[str]:
    """The distinct tokens of ``pairs``: those whose statistics the shares need."""
    return query_tokens([token for pair in pairs for token in pair])


def pair_shares(
    pairs: Sequence[tuple[str, str]],
    passages: Sequence[Positions],
    documents: int,
    frequency: Mapping[str, int],
    k1: float,
) -> list[float]:
    """Each passage's score as a share of `pair_bound`, in ``[0, 1)`` whatever the list.

    ``documents`` and ``frequency``: BM25's ``N`` and ``n`` per token of `pair_tokens`.
    """
    idf = {token: idf_of(documents, frequency, token) for token in pair_tokens(pairs)}
    bound = pair_bound(pairs, idf, k1)
    return [score / bound for score in proximity_scores(pairs, passages, idf, k1)]


def blend(score: float, share: float, weight: float) -> float:
    """A fused score with its proximity share, kept in the fused scores' range."""
    return (score + weight * share) / (1.0 + weight)


def pairs_of(tokens: Sequence[str]) -> list[tuple[str, str]]:
    """The query's neighbouring distinct tokens, each pair once, in query order."""
    return list(dict.fromkeys((a, b) for a, b in pairwise(tokens) if a != b))


def idf_of(documents: int, frequency: Mapping[str, int], token: str) -> float:
    """BM25's idf of ``token`` (``rcpkit.engine.scoring.bm25``'s, clamped above 0)."""
    n = frequency.get(token, 0)
    value = math.log((documents - n + 0.5) / (n + 0.5)) if documents else 0.0
    return value if value > 0 else 1e-6


def pair_bound(pairs: Sequence[tuple[str, str]], idf: Mapping[str, float], k1: float) -> float:
    """The most a passage can score: every pair's count saturated. Independent of the list."""
    return sum((idf[a] + idf[b]) / 2 * (k1 + 1.0) for a, b in pairs)


Positions = Mapping[str, Sequence[int]]  # a passage's analysed tokens → their positions


def positions_of(tokens: Sequence[str]) -> dict[str, list[int]]:
    """Where each token of a passage (its analysed tokens, in order) occurs, ascending."""
    where: dict[str, list[int]] = {}
    for position, token in enumerate(tokens):
        where.setdefault(token, []).append(position)
    return where


def proximity_scores(
    pairs: Sequence[tuple[str, str]],
    passages: Sequence[Positions],
    idf: Mapping[str, float],
    k1: float,
    window: int = WINDOW,
) -> list[float]:
    """Each passage's proximity score (its `positions_of`); 0 with no pair near."""
    out = []
    for where in passages:
        total = 0.0
        for a, b in pairs:
            first, second = where.get(a), where.get(b)
            if not first or not second:
                continue
            # positions j of b with 0 < |i - j| <= window (a and b differ, so j != i)
            count = sum(
                bisect_right(second, i + window) - bisect_left(second, i - window) for i in first
            )
            if count:
                total += (idf[a] + idf[b]) / 2 * count * (k1 + 1.0) / (count + k1)
        out.append(total)
    return out
