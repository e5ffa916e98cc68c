"""Near-duplicate chunks collapsed to the best-ranked one (issue 36 item 5).

A docs corpus repeats itself: the same ``client = TestClient(app)`` preamble in
every test file, one paragraph copied into three guides. Each copy matches a
query as well as the others, so five of them filled a top 5. MMR (§7.7 ``mmr``)
would push them apart too, but it trades relevance for novelty on every hit and
cost nDCG where nothing was duplicated; this stage drops only a chunk whose
words are the same as a chunk's ranked above it (ignoring case, spacing and
punctuation).

Near copies are collapsed too when the engine is given a ``similarity`` below
1 (``[engine] duplicate_similarity``): the Jaccard similarity of the two texts'
word trigrams at least that. It is not the default because near copies are
often distinct answers: in the man-page collection of docs/quality.md, 18
pairs of pages are ≥ 0.9 alike (``lldb-tblgen`` and ``mlir-tblgen`` differ in
the program's name), and a known-item query for one must not lose it to the
other. Exact copies were 1 pair or none in each collection.

Paging stays exact (§10): whether a chunk is kept depends only on the chunks
ranked above it, so the collapsed ranking's first ``n`` entries are the same
whichever page computes them, and a window is widened until it holds one kept
chunk past the page (so ``nextCursor`` is given only when a next hit exists).
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rcpkit.engine.retrieve.stages import Candidate
from rcpkit.engine.store.base import ChunkRow

__all__ = ["Collapsed", "collapse_duplicates"]

_WORD = re.compile(r"\w+")
# Exact copies are compared as their lowercased words: ASCII punctuation is a space.
_PUNCTUATION = str.maketrans(dict.fromkeys(string.punctuation, " "))

Fetch = Callable[[list[int]], dict[int, ChunkRow]]


@dataclass(frozen=True, slots=True)
class Collapsed:
    candidates: list[Candidate]  # the ranking with later copies removed, as far as read
    rows: dict[int, ChunkRow]  # every row read on the way (the page's among them)
    dropped: int


@dataclass(frozen=True, slots=True)
class _Fingerprint:
    words: str
    shingles: frozenset[tuple[str, str, str]]


def collapse_duplicates(
    candidates: Sequence[Candidate], fetch: Fetch, depth: int, similarity: float = 1.0
) -> Collapsed:
    """``candidates`` without the chunks that repeat a better-ranked one's text.

    Reads rows in windows until ``depth + 1`` chunks are kept or none are left;
    candidates past the last window follow unchecked (no page reaches them).
    """
    kept: list[Candidate] = []
    seen: dict[str, None] = {}
    fingerprints: list[_Fingerprint] = []
    rows: dict[int, ChunkRow] = {}
    position = 0
    while position < len(candidates) and len(kept) <= depth:
        wanted = depth + 1 - len(kept)
        window = candidates[position : position + wanted + max(2, wanted // 4)]
        position += len(window)
        rows.update(fetch([c.key for c in window if c.key not in rows]))
        for candidate in window:
            row = rows.get(candidate.key)
            if row is None:
                kept.append(candidate)  # collected since recall: the page drops it
                continue
            fingerprint = _fingerprint(row.text, shingled=similarity < 1)
            near = similarity < 1 and _near_any(fingerprint, fingerprints, similarity)
            if fingerprint.words in seen or near:
                continue
            seen[fingerprint.words] = None
            fingerprints.append(fingerprint)
            kept.append(candidate)
    dropped = position - len(kept)
    return Collapsed([*kept, *candidates[position:]], rows, dropped)


def _fingerprint(text: str, *, shingled: bool) -> _Fingerprint:
    """The text's words; its word trigrams too when near copies are compared."""
    if not shingled:  # the cheap form: this runs on every retrieve
        return _Fingerprint(" ".join(text.lower().translate(_PUNCTUATION).split()), frozenset())
    words = _WORD.findall(text.lower())
    shingles = frozenset(zip(words, words[1:], words[2:], strict=False))
    return _Fingerprint(" ".join(words), shingles)


def _near_any(fingerprint: _Fingerprint, kept: list[_Fingerprint], similarity: float) -> bool:
    mine = fingerprint.shingles
    if not mine:
        return False
    for other in kept:
        theirs = other.shingles
        # Jaccard >= t needs the smaller set to be at least t times the larger.
        if not theirs or min(len(mine), len(theirs)) < similarity * max(len(mine), len(theirs)):
            continue
        shared = len(mine & theirs)
        if shared >= similarity * (len(mine) + len(theirs) - shared):
            return True
    return False
