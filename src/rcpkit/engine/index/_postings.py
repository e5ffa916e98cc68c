"""The embedded store's lexical index: in-memory postings and an exact BM25 top-k that prunes.

Why not FTS5's ``bm25() ORDER BY rank``: it scores and sorts every row that
matches any query term (a Zipf query matched 259k of 300k rows); nothing
prunes to the top k. Why not tantivy beside SQLite: its BM25 is per field with
index-wide statistics, while this store's contract is FTS5's weighted-column
BM25 with the statistics of the caller's tenant at the version read — the
formula the PostgreSQL store reproduces (``_pg_lexical``), equal on every
version and tenant — and a second durable index would need its own crash repair.

The formula (``bm25`` documents it term for term), with the index's
`BM25` parameters (k1 0.9, b 0.6, title 3, body 1 unless it was created with
others): ``f`` the weighted hit count (a title hit counts ``title_weight``, a
body hit ``body_weight``); ``|D|`` the row's tokens over both columns;
``idf = ln((N - n + 0.5) / (n + 0.5))`` clamped to ``1e-6``; ``N``, ``n`` and
``avgdl`` over the rows the caller's tenant sees at the version read (§7.7.1, §15.6).

Pruning is MaxScore, vectorised: each term has an upper bound on what it can
add to a row's score (its query weight times its idf times the tf part at its
largest ``f`` and shortest row). A first threshold comes from fully scoring the rows of the
strongest terms; the weakest terms whose bounds sum below it cannot lift a row
into the top k on their own, so only rows holding a stronger term are
candidates, and the weak terms are looked up for those rows alone (binary
search in their sorted postings) — a head term's million postings are never
scanned. Before each weak term's lookup the cut is tightened: the k-th best
partial score is a lower bound on the k-th best final one, so a candidate that
cannot reach it with the remaining weak terms at their bounds is dropped. That
is what keeps a feedback-expanded query (``prf.py``: 16 terms, most of them
head terms) near the cost of the original (at 100k synthetic chunks 67 → 22 ms
per query in one process). Pruning has a price per term (the threshold's
lookups, a lookup per weak term): when the terms hold fewer than
``_DIRECT_POSTINGS`` postings each on average, every term is scored in one pass
instead (a feedback pass's 20 terms over Cranfield's 2,101 chunks: 0.86 →
0.42 ms; at 100k synthetic chunks no change). A caller that knows a lower
bound on the k-th best score gives it as ``floor`` and the seed rows are not
scored at all (the feedback pass: its expanded query scores every row at least
as the first query did). Either way the result is the exact top k, ties broken
by the smaller key.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np
import numpy.typing as npt

from rcpkit.engine.scoring.bm25 import BM25, DEFAULT_BM25, tokens

__all__ = ["FrozenPostings", "LexicalView", "Postings", "analysed_rows", "frequencies"]

Positions = npt.NDArray[np.int32]
Weighted = npt.NDArray[np.float32]  # weighted tf: exact, the weights are multiples of 1/4
Piece = tuple[Positions, Weighted]  # sorted row positions, weighted tf
_MAX_PIECES = 8  # a term never holds more pieces than this (see _appended)
_MARGIN = 1 + 1e-9  # upper bounds are widened so float rounding never prunes a true hit
_DIRECT_POSTINGS = 1024  # per query term: fewer postings in all, no pruning (top_k)


Row = tuple[list[str], list[str]]  # a row's title tokens, body tokens


def analysed_rows(rows: Sequence[tuple[str, str]]) -> tuple[list[Row], npt.NDArray[np.float64]]:
    """Per row its (title tokens, body tokens), and its |D| (both columns, unweighted)."""
    out: list[Row] = []
    lengths = np.empty(len(rows), dtype=np.float64)
    for i, (title, body) in enumerate(rows):
        in_title = tokens(title) if title else []
        in_body = tokens(body) if body else []
        lengths[i] = len(in_title) + len(in_body)
        out.append((in_title, in_body))
    return out, lengths


class Postings:
    """term -> pieces of (row positions, weighted tf); rows are appended in position order.

    The weighted tf is ``title_weight · title hits + body_weight · body hits`` of
    the index's `BM25`, which also gives the ranking's k1 and b (`top_k`).
    """

    def __init__(self, bm25: BM25 = DEFAULT_BM25) -> None:
        self.bm25 = bm25
        self._terms: dict[str, tuple[Piece, ...]] = {}
        self._bounds: dict[str, tuple[float, float]] = {}  # (largest f, shortest row)
        self._lock = threading.Lock()

    def extend(self, first: int, rows: Sequence[Row], lengths: npt.NDArray[np.float64]) -> None:
        """Append rows ``first, first + 1, …``, each its (title, body) tokens (the writer's side).

        Vectorised: tokens become integer ids, then (term, row) pairs are grouped by
        one stable sort of the ids and their weights summed per pair; Python touches
        each token once, each distinct term once.
        """
        flat = list(chain.from_iterable(chain(title, body) for title, body in rows))
        if not flat:
            return
        # C-speed passes only: distinct tokens in order, then one id lookup per token.
        vocabulary = {token: i for i, token in enumerate(dict.fromkeys(flat))}
        ids = np.fromiter(map(vocabulary.__getitem__, flat), dtype=np.int64, count=len(flat))
        sizes = np.array([(len(title), len(body)) for title, body in rows], dtype=np.int64)
        row_of = np.repeat(np.arange(len(rows), dtype=np.int64), sizes.sum(axis=1))
        column_weights = np.array([self.bm25.title_weight, self.bm25.body_weight])
        weight_of = np.repeat(np.tile(column_weights, len(rows)), sizes.ravel())
        pairs, summed = _pair_weights(ids, row_of, weight_of, len(rows), len(vocabulary))
        term_of, offset = np.divmod(pairs, len(rows))
        starts = np.flatnonzero(np.r_[True, term_of[1:] != term_of[:-1]])
        ends = np.r_[starts[1:], len(pairs)]
        positions = (offset + first).astype(np.int32)
        weighted = summed.astype(np.float32)
        # Per term, as Python values taken out of the arrays at once (issue 51.5: the
        # loop below is the part of an add's postings that is Python, once per term).
        names = list(vocabulary)
        terms = [names[i] for i in term_of[starts].tolist()]
        largest = np.maximum.reduceat(weighted, starts).tolist()
        shortest = np.minimum.reduceat(lengths[offset], starts).tolist()
        spans = zip(terms, starts.tolist(), ends.tolist(), largest, shortest, strict=True)
        with self._lock:
            held, bounds = self._terms, self._bounds
            for term, start, end, f, length in spans:
                piece = (positions[start:end], weighted[start:end])
                before = held.get(term)
                if before is None:  # a new term: one piece, its own bounds
                    held[term] = (piece,)
                    bounds[term] = (f, length)
                    continue
                held[term] = _appended(before, piece)
                old_f, old_length = bounds[term]
                bounds[term] = (max(old_f, f), min(old_length, length))

    def freeze(self, size: int, lengths: npt.NDArray[np.float64]) -> FrozenPostings:
        """Rows ``[0, size)`` as flat arrays (what the mirror's cache file stores).

        The bounds are recomputed over those rows alone, so a mirror thawed from
        them and then given the newer rows holds the bounds a load of every row
        gives — and ranks with the same term order, to the last bit.
        """
        with self._lock:
            held = list(self._terms.items())
        names: list[str] = []
        positions: list[Positions] = []
        weights: list[Weighted] = []
        counts: list[int] = []
        for term, pieces in held:
            kept = [(p[p < size], f[p < size]) for p, f in pieces if len(p) and p[0] < size]
            total = sum(len(p) for p, _ in kept)
            if total:
                names.append(term)
                counts.append(total)
                positions.extend(p for p, _ in kept)
                weights.extend(f for _, f in kept)
        offsets = np.zeros(len(names) + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        flat = np.concatenate(positions) if positions else np.zeros(0, np.int32)
        tf = np.concatenate(weights) if weights else np.zeros(0, np.float32)
        starts = offsets[:-1]
        largest = np.maximum.reduceat(tf, starts) if names else np.zeros(0, np.float32)
        shortest = np.minimum.reduceat(lengths[flat], starts) if names else np.zeros(0, np.float64)
        return FrozenPostings(names, offsets, flat, tf, largest.astype(np.float32), shortest)

    @classmethod
    def thaw(cls, frozen: FrozenPostings, bm25: BM25 = DEFAULT_BM25) -> Postings:
        """Postings over the frozen rows (one piece per term, views of the flat arrays)."""
        postings = cls(bm25)
        bounds = zip(frozen.largest.tolist(), frozen.shortest.tolist(), strict=True)
        ends = frozen.offsets.tolist()
        for i, (term, bound) in enumerate(zip(frozen.terms, bounds, strict=True)):
            start, end = ends[i], ends[i + 1]
            postings._terms[term] = ((frozen.positions[start:end], frozen.weights[start:end]),)
            postings._bounds[term] = bound
        return postings

    def pieces(self, term: str, size: int) -> list[Piece]:
        """The term's postings among rows ``[0, size)``."""
        out = []
        for positions, f in self._terms.get(term, ()):
            if len(positions) and positions[0] < size:
                end = int(np.searchsorted(positions, size)) if positions[-1] >= size else None
                out.append((positions[:end], f[:end]) if end is not None else (positions, f))
        return out

    def bound(self, term: str) -> tuple[float, float]:
        return self._bounds[term]


def _pair_weights(
    ids: npt.NDArray[np.int64],
    row_of: npt.NDArray[np.int64],
    weight_of: npt.NDArray[np.float64],
    rows: int,
    terms: int,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """The distinct (term, row) pairs as ``term · rows + row``, ascending, and each one's
    summed weight.

    The tokens come in row order, so a stable sort by term id alone leaves each term's
    rows ascending: pairs are runs of equal keys. Ids below 2¹⁶ sort by radix, in
    linear time (issue 51.5: ``np.unique`` of the keys was 23 ms a 5,000-chunk add,
    this is 3 ms).
    """
    small = ids.astype(np.uint16) if terms <= 1 << 16 else ids
    order = np.argsort(small, kind="stable")
    keys = (ids * rows + row_of)[order]
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    return keys[starts], np.add.reduceat(weight_of[order], starts)


def _appended(pieces: tuple[Piece, ...], new: Piece) -> tuple[Piece, ...]:
    """``pieces`` and ``new``, merged like a binary counter (an LSM's size tiers).

    A piece is merged into its predecessor while that one is no larger, so a term
    has O(log n) pieces of growing size (each lookup searches every piece) and each
    posting is copied O(log n) times over a bulk load; ``_MAX_PIECES`` caps the rest.
    """
    out = [*pieces, new]
    while len(out) > 1 and (len(out[-2][0]) <= len(out[-1][0]) or len(out) > _MAX_PIECES):
        (before, f_before), (last, f_last) = out[-2], out[-1]
        out[-2:] = [(np.concatenate([before, last]), np.concatenate([f_before, f_last]))]
    return tuple(out)


@dataclass(frozen=True, slots=True)
class FrozenPostings:
    """Postings as flat arrays: term ``i`` holds ``positions[offsets[i]:offsets[i + 1]]``."""

    terms: list[str]
    offsets: npt.NDArray[np.int64]
    positions: Positions
    weights: Weighted
    largest: Weighted  # per term: its largest weighted tf
    shortest: npt.NDArray[np.float64]  # per term: its shortest row


@dataclass(slots=True)
class LexicalView:
    """What a query reads: rows ``[0, size)`` at one version for one tenant.

    ``visible`` is None when every row is visible (one tenant, nothing retired);
    ``allowed`` the §8 filter's mask (None: no filter), which narrows the rows
    ranked but never the statistics (as in FTS5 and the PostgreSQL store).
    """

    keys: npt.NDArray[np.int64]
    lengths: npt.NDArray[np.float64]
    visible: npt.NDArray[np.bool_] | None
    documents: int  # N
    total_length: float
    allowed: npt.NDArray[np.bool_] | None
    frequency_cache: dict[str, int]


@dataclass(frozen=True, slots=True)
class _Scale:
    """The tf part's constants for one query: the index's k1 and b, the view's avgdl."""

    k1: float
    b: float
    average: float


@dataclass(slots=True)
class _Term:
    pieces: list[Piece]
    idf: float  # times the query's weight of the term
    bound: float
    count: int  # postings (visible or not) in the pieces


def top_k(
    postings: Postings,
    weights: Mapping[str, float],
    k: int,
    view: LexicalView,
    floor: float = 0.0,
) -> list[tuple[int, float]]:
    """The exact BM25 top ``k`` (key, score) of ``view``; higher is better.

    ``weights``: each distinct query token and its weight ``w`` (``query_weights``:
    1 + ln of how often the query holds it), which scales the term's part and its bound alike.

    ``floor`` > 0: a lower bound on the k-th best score the caller knows (the
    feedback pass's expanded query scores every row at least as the query it
    expands did), taken as the pruning threshold instead of scoring seed rows.
    """
    size = len(view.keys)
    if k <= 0 or view.documents == 0 or size == 0:
        return []
    bm25 = postings.bm25
    scale = _Scale(bm25.k1, bm25.b, view.total_length / view.documents)
    terms = _terms(postings, weights, size, view, scale)
    if not terms:
        return []
    mask = view.visible if view.allowed is None else _and(view.visible, view.allowed)
    terms.sort(key=lambda term: -term.bound)
    # Pruning pays for a threshold and a lookup per weak term: with few postings in
    # all, scoring every term in one pass is cheaper (threshold 0: none is weak).
    few = sum(term.count for term in terms) <= _DIRECT_POSTINGS * len(terms)
    known = floor if floor > 0 else None  # the caller's bound needs no seed rows
    threshold = 0.0 if few else known or _threshold(terms, k, mask, view, scale)
    weak = _weak_terms(terms, threshold)
    strong = [term for term in terms if all(term is not other for other in weak)]
    candidates, partial = _score_strong(strong, mask, view, scale, size)
    weak.reverse()  # strongest first: each lookup then tightens the next cut most
    for done, term in enumerate(weak):
        # Every row's full score is at least its partial one, so the k-th best partial
        # is a lower bound on the k-th best full score; a row that cannot reach it
        # even with every remaining weak term at its bound is out.
        cut = max(threshold, _kth(partial, k))
        keep = partial + sum(other.bound for other in weak[done:]) >= cut
        candidates, partial = candidates[keep], partial[keep]
        partial += _lookup(term, candidates, view, scale)
    return _best(view.keys[candidates], partial, k)


def _kth(scores: npt.NDArray[np.float64], k: int) -> float:
    """The k-th largest of ``scores`` (0 when there are fewer)."""
    if len(scores) < k:
        return 0.0
    return float(np.partition(scores, len(scores) - k)[len(scores) - k])


def _terms(
    postings: Postings, weights: Mapping[str, float], size: int, view: LexicalView, scale: _Scale
) -> list[_Term]:
    out = []
    for token, weight in weights.items():
        pieces = postings.pieces(token, size)
        if not pieces:
            continue
        n = _frequency(token, pieces, view)
        if n == 0:
            continue
        idf = math.log((view.documents - n + 0.5) / (n + 0.5))
        # The weight rides on the idf: every part of the term and its bound scale alike.
        idf = weight * (1e-6 if idf <= 0 else idf)
        largest, shortest = postings.bound(token)
        bound = idf * _tf(np.float64(largest), np.float64(shortest), scale) * _MARGIN
        out.append(_Term(pieces, idf, float(bound), sum(len(p) for p, _ in pieces)))
    return out


def frequencies(postings: Postings, tokens: Sequence[str], view: LexicalView) -> dict[str, int]:
    """``n`` of each token: the rows of ``view`` holding it (BM25's document frequency)."""
    size = len(view.keys)
    return {token: _frequency(token, postings.pieces(token, size), view) for token in tokens}


def _frequency(token: str, pieces: list[Piece], view: LexicalView) -> int:
    # One query asks a token's n once per view: the view remembers it.
    cached = view.frequency_cache.get(token)
    if cached is not None:
        return cached
    if view.visible is None:
        return sum(len(positions) for positions, _ in pieces)
    visible = view.visible
    cached = sum(int(np.count_nonzero(visible[positions])) for positions, _ in pieces)
    view.frequency_cache[token] = cached
    return cached


def _tf(f: npt.ArrayLike, length: npt.ArrayLike, scale: _Scale) -> npt.NDArray[np.float64]:
    f = np.asarray(f, dtype=np.float64)
    k1, b = scale.k1, scale.b
    out: npt.NDArray[np.float64] = (
        f * (k1 + 1.0) / (f + k1 * (1.0 - b + b * np.asarray(length) / scale.average))
    )
    return out


def _and(one: npt.NDArray[np.bool_] | None, other: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
    return other if one is None else one & other


def _threshold(
    terms: list[_Term],
    k: int,
    mask: npt.NDArray[np.bool_] | None,
    view: LexicalView,
    scale: _Scale,
) -> float:
    """A lower bound on the k-th best score: the full scores of the strongest terms' rows."""
    seeds: list[Positions] = []
    found = 0
    for term in terms[:-1]:  # with every term taken, pruning has nothing left to skip
        for positions, _ in term.pieces:
            kept = positions if mask is None else positions[mask[positions]]
            seeds.append(kept)
            found += len(kept)
        if found >= k:
            break
    if found < k:
        return 0.0
    # Bound the work: the full scores of any k distinct rows give a lower bound, so a
    # common term's seeds are thinned before the (hashing) unique, not after it.
    cap = 4 * k * 64
    if found > cap:
        step = found // cap + 1
        seeds = [kept[::step] for kept in seeds]
    rows = np.unique(np.concatenate(seeds))
    scores = np.zeros(len(rows), dtype=np.float64)
    for term in terms:
        scores += _lookup(term, rows, view, scale)
    if len(scores) < k:
        return 0.0
    return float(np.partition(scores, len(scores) - k)[len(scores) - k])


def _weak_terms(terms: list[_Term], threshold: float) -> list[_Term]:
    """The weakest terms whose bounds together stay below ``threshold``."""
    weak: list[_Term] = []
    total = 0.0
    for term in reversed(terms):  # weakest first
        if total + term.bound >= threshold:
            break
        total += term.bound
        weak.append(term)
    return weak


def _score_strong(
    strong: list[_Term],
    mask: npt.NDArray[np.bool_] | None,
    view: LexicalView,
    scale: _Scale,
    size: int,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """Rows holding a strong term and their strong terms' score."""
    total = sum(term.count for term in strong)
    if total * 8 > size:  # dense: accumulate into one score per row
        scores = np.zeros(size, dtype=np.float64)
        for term in strong:
            for positions, f in term.pieces:
                scores[positions] += term.idf * _tf(f, view.lengths[positions], scale)
        if mask is not None:
            scores[~mask] = 0.0
        rows = np.flatnonzero(scores).astype(np.int64)
        return rows, scores[rows]
    all_rows, all_scores = [], []
    for term in strong:
        for positions, f in term.pieces:
            if mask is not None:
                keep = mask[positions]
                positions, f = positions[keep], f[keep]
            all_rows.append(positions)
            all_scores.append(term.idf * _tf(f, view.lengths[positions], scale))
    if not all_rows:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
    rows, inverse = np.unique(np.concatenate(all_rows), return_inverse=True)
    summed = np.bincount(inverse, weights=np.concatenate(all_scores), minlength=len(rows))
    return rows.astype(np.int64), summed.astype(np.float64)


def _lookup(
    term: _Term, rows: npt.NDArray[np.integer], view: LexicalView, scale: _Scale
) -> npt.NDArray[np.float64]:
    """The term's contribution to each of ``rows`` (sorted), 0 where it is absent."""
    out = np.zeros(len(rows), dtype=np.float64)
    for positions, f in term.pieces:
        at = np.searchsorted(positions, rows)
        at[at == len(positions)] = 0
        hit = positions[at] == rows
        where = at[hit]
        out[hit] += term.idf * _tf(f[where], view.lengths[rows[hit]], scale)
    return out


def _best(
    keys: npt.NDArray[np.int64], scores: npt.NDArray[np.float64], k: int
) -> list[tuple[int, float]]:
    if len(scores) > k:
        part = np.argpartition(-scores, k - 1)[:k]
        # Rows tied with the k-th score outside the partition: the smaller key wins.
        kth = scores[part].min()
        part = np.union1d(part, np.flatnonzero(scores == kth))
    else:
        part = np.arange(len(scores))
    order = part[np.lexsort((keys[part], -scores[part]))][:k]
    return [(int(keys[i]), float(scores[i])) for i in order]
