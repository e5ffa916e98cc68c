"""Greedy, boundary-preferring packing of weighted atoms into overlapping windows.

Linear in the number of atoms: prefix sums make every window's weight O(1), each
chunk scans only the atoms of its own window, and starts only move forward.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from itertools import accumulate

from rcpkit.engine.ingest._boundaries import (
    DEFINITION,
    LINE,
    MID_WORD,
    PARAGRAPH,
    SENTENCE,
    WORD,
    Atoms,
)

__all__ = ["MIN_FILL", "pack", "split_oversized"]

MIN_FILL = {DEFINITION: 0.1, PARAGRAPH: 0.35, SENTENCE: 0.5, LINE: 0.6, WORD: 0.7, MID_WORD: 0.9}
"""The share of the budget a chunk must hold before it may end at a gap of each strength.

A chunk ends at the strongest gap it may end at (the last among equals): a weak gap
must be near the budget to be worth it, a paragraph end is worth a shorter chunk, and
a top-level definition almost always is: the chunk only ends early there when the
next definition would not fit whole, and then it starts the next chunk instead.
"""
_LOWEST_FILL = min(MIN_FILL.values())


def split_oversized(atoms: Atoms, costs: list[float], budget: float) -> tuple[Atoms, list[float]]:
    """Cut every atom costing more than ``budget`` into equal pieces that fit."""
    if all(cost <= budget for cost in costs):
        return atoms, costs
    result = Atoms([], [], [])
    result_costs: list[float] = []
    for index, cost in enumerate(costs):
        start, end = atoms.starts[index], atoms.ends[index]
        pieces = min(max(1, math.ceil(cost / budget)), end - start)
        for piece in range(pieces):
            result.starts.append(start + (end - start) * piece // pieces)
            result.ends.append(start + (end - start) * (piece + 1) // pieces)
            result.strengths.append(atoms.strengths[index] if piece == 0 else MID_WORD)
            result_costs.append(cost / pieces)
    return result, result_costs


def pack(atoms: Atoms, costs: list[float], budget: float, overlap: float) -> list[tuple[int, int]]:
    """Atom ranges ``[first, stop)``, each within ``budget``, successive ones overlapping.

    Consecutive ranges share about ``overlap`` worth of atoms, starting the shared
    part at a sentence when one is near; every range reaches past the one before.
    """
    prefix = list(accumulate(costs, initial=0.0))
    count = len(costs)
    ranges: list[tuple[int, int]] = []
    first, covered = 0, 0
    while covered < count:
        limit = max(bisect_right(prefix, prefix[first] + budget) - 1, first + 1)
        if limit <= covered and first < covered:
            first = covered  # the overlap left no room for anything new: drop it
            continue
        stop = (
            count
            if limit >= count
            else _best_stop(atoms.strengths, prefix, first, covered, limit, budget)
        )
        ranges.append((first, stop))
        covered = stop
        if stop < count:
            first = _next_first(atoms.strengths, prefix, first, stop, overlap)
    return ranges


def _best_stop(
    strengths: list[int], prefix: list[float], first: int, covered: int, limit: int, budget: float
) -> int:
    lowest = max(covered + 1, first + 1)
    base = prefix[first]
    low = max(lowest, min(bisect_left(prefix, base + _LOWEST_FILL * budget), limit))
    best: int | None = None
    for index in range(limit, low - 1, -1):
        strength = strengths[index]
        if (best is None or strength > strengths[best]) and (
            prefix[index] - base >= MIN_FILL[strength] * budget
        ):
            best = index
    if best is None or strengths[best] == MID_WORD:
        # Cut a long word only if no real gap exists anywhere in the window.
        best = _strongest(strengths, lowest, limit)
    return best


def _strongest(strengths: list[int], low: int, high: int) -> int:
    """The index in ``[low, high]`` of the strongest gap, the last one among equals."""
    best = high
    for index in range(high - 1, low - 1, -1):
        if strengths[index] > strengths[best]:
            best = index
    return best


def _next_first(
    strengths: list[int], prefix: list[float], first: int, stop: int, overlap: float
) -> int:
    if overlap <= 0:
        return stop
    low = max(bisect_left(prefix, prefix[stop] - overlap), first + 1)
    # The longest overlap that starts a sentence, else a line, else any word.
    for wanted in (SENTENCE, LINE, WORD):
        found = next((i for i in range(low, stop) if strengths[i] >= wanted), None)
        if found is not None:
            return found
    return stop
