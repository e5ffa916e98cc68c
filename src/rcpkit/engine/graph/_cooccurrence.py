"""Co-occurrence counting: which entity pairs share a sentence, and which share a chunk.

A pure function of one chunk's mentions, so removing a chunk subtracts exactly
what adding it contributed — no per-chunk edge rows need to be kept.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterable

__all__ = ["PairCounts", "chunk_pairs", "merge_pairs"]

#: (low id, high id) → [shared sentences, shared chunks]
PairCounts = dict[tuple[int, int], list[int]]


def chunk_pairs(mentions: Iterable[tuple[int, int]]) -> PairCounts:
    """Pair counts of one chunk from its `(entity id, sentence index)` mentions."""
    by_sentence: dict[int, set[int]] = defaultdict(set)
    for entity, sentence in mentions:
        by_sentence[sentence].add(entity)
    counts: PairCounts = {}
    for members in by_sentence.values():
        for pair in itertools.combinations(sorted(members), 2):
            counts.setdefault(pair, [0, 0])[0] += 1
    everyone = sorted(set().union(*by_sentence.values())) if by_sentence else []
    for pair in itertools.combinations(everyone, 2):
        counts.setdefault(pair, [0, 0])[1] += 1
    return counts


def merge_pairs(parts: Iterable[PairCounts]) -> PairCounts:
    """The element-wise sum of several chunks' pair counts."""
    total: PairCounts = {}
    for part in parts:
        for pair, (sentences, chunks) in part.items():
            entry = total.setdefault(pair, [0, 0])
            entry[0] += sentences
            entry[1] += chunks
    return total
