"""Global search: score every community summary at one level (map), then merge (reduce).

Map: a community's score is `dense_share · max(0, cos(query, summary vector))
+ (1 - dense_share) · lexical`, where lexical is the idf-weighted share of the
query's content words found in the community's title, summary and member
names. Reduce: the chosen communities' summary sentences, weighted by their
community's score and their own word overlap with the query, best first,
near-duplicates skipped, up to `reduce_sentences` / `reduce_chars`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from rcpkit.engine.graph._community_index import CommunityIndex
from rcpkit.engine.graph._config import GraphConfig
from rcpkit.engine.graph._results import GlobalResult, ScoredCommunity
from rcpkit.engine.graph._summaries import near_duplicate
from rcpkit.engine.graph._text import terms as query_terms

__all__ = ["global_search"]

FloatArray = npt.NDArray[np.float64]


def _lexical(query: Sequence[str], terms: Sequence[frozenset[str]]) -> FloatArray:
    if not query or not terms:
        return np.zeros(len(terms))
    df = {word: sum(word in t for t in terms) for word in query}
    idf = {word: math.log1p(len(terms) / (df[word] + 0.5)) for word in query}
    total = sum(idf.values())
    return np.array([sum(idf[w] for w in query if w in t) / total for t in terms])


def global_search(
    index: CommunityIndex,
    query: str,
    k: int,
    level: int,
    config: GraphConfig,
    dense: FloatArray | None = None,
) -> GlobalResult:
    """Top `k` communities at `level` for `query`, with a combined extractive summary.

    `dense` holds the cosine of the query with each community at the level (in
    `index.at_level` order), or None to score by words alone.
    """
    chosen_level = min(max(level, 0), max(index.levels - 1, 0))
    at = index.at_level(chosen_level)
    words = query_terms(query)
    lexical = _lexical(words, [index.terms[i] for i in at])
    cosine = np.zeros(len(at)) if dense is None else np.maximum(dense, 0.0)
    share = config.dense_share if dense is not None else 0.0
    score = share * cosine + (1.0 - share) * lexical
    order = np.lexsort((np.arange(len(at)), -score))[: max(k, 0)]
    ranked = tuple(
        ScoredCommunity(index.infos[at[i]], float(score[i]), float(cosine[i]), float(lexical[i]))
        for i in order
        if score[i] > 0
    )
    return GlobalResult(_reduce(index, ranked, words, config), ranked, chosen_level)


def _reduce(
    index: CommunityIndex,
    ranked: Sequence[ScoredCommunity],
    words: Sequence[str],
    config: GraphConfig,
) -> str:
    position = {info.id: i for i, info in enumerate(index.infos)}
    wanted = set(words)
    candidates: list[tuple[float, int, str]] = []
    for order, scored in enumerate(ranked):
        for rank, (_, _, text) in enumerate(index.sentences[position[scored.community.id]]):
            overlap = len(wanted & set(query_terms(text))) / max(len(wanted), 1)
            weight = scored.score * (0.5 + 0.5 * overlap) / (1.0 + 0.25 * rank)
            candidates.append((-weight, order * 1000 + rank, text))
    kept: list[str] = []
    used = 0
    for _, _, text in sorted(candidates):
        if near_duplicate(text, kept) or (kept and used + len(text) + 1 > config.reduce_chars):
            continue
        kept.append(text)
        used += len(text) + 1
        if len(kept) >= config.reduce_sentences:
            break
    return " ".join(kept)
