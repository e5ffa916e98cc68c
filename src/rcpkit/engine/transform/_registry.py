"""The transform registry: method name → function, honest descriptions, the entry point."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Final

from rcpkit.engine.transform._decompose import decompose
from rcpkit.engine.transform._hyde import hyde
from rcpkit.engine.transform._multi_query import multi_query
from rcpkit.engine.transform._neighbours import DenseNeighbours
from rcpkit.engine.transform._rewrite import rewrite
from rcpkit.engine.transform._step_back import step_back
from rcpkit.engine.transform._types import (
    DEFAULT_QUERIES,
    MAX_QUERIES,
    TRANSFORM_METHODS,
    Corpus,
    TransformContext,
    Transformed,
    TransformFunction,
    TransformMethod,
    TransformOptions,
)

__all__ = ["DESCRIPTIONS", "TRANSFORMS", "method_named", "query_bound", "transform"]

TRANSFORMS: Final[Mapping[TransformMethod, TransformFunction]] = {
    "rewrite": rewrite,
    "hyde": hyde,
    "multi-query": multi_query,
    "decompose": decompose,
    "step-back": step_back,
}

#: One honest line per method, for capability metadata and the README.
DESCRIPTIONS: Final[Mapping[TransformMethod, str]] = {
    "rewrite": (
        "Unicode NFKC and whitespace normalisation, then spelling correction of words the "
        "corpus has never seen to the nearest corpus word (edit distance 1 for 3-5 letters, "
        "2 beyond; most frequent on ties; never to a stopword). Numbers, code-like tokens, "
        "acronyms and known words are kept. One query."
    ),
    "hyde": (
        "Feedback-based, not generated: the pseudo-document is the most query-relevant "
        "sentences of the top retrieved passages (idf-weighted term overlap, near-duplicates "
        "dropped, about 120 words), returned as `hypothetical`; `queries` is the query."
    ),
    "multi-query": (
        "Up to n (at most 8) variants, the original first: the query plus RM3 "
        "pseudo-relevance-feedback expansion terms from the top passages (tf x idf, "
        "interpolated with the query), and, when an embedder is configured, the query with "
        "one word replaced by a nearby corpus word in embedding space. Fuse with RRF."
    ),
    "decompose": (
        "Rule-based split of a multi-part question: separate sentences or question marks, "
        "coordinated questions ('X and how Y'), comparisons ('X vs Y', 'difference between "
        "X and Y', 'compare X with Y': one query per side with the shared predicate) and "
        "lists ('the A, B and C of X'). A single-part question returns itself. Merge the "
        "sub-queries' hits round-robin, so every part keeps its best hits."
    ),
    "step-back": (
        "Rule-based broadening: drops numbers, years, dates, quantities, quoted strings, "
        "capitalised named entities and superlatives with their orphaned prepositions, "
        "keeping the core concept; returns [broader, original]. Never empty."
    ),
}

_DEFAULT_BOUND: Final[Mapping[TransformMethod, int]] = {"multi-query": DEFAULT_QUERIES}


def query_bound(method: TransformMethod, n: int | None) -> int:
    """The number of queries `method` may return: `n` (or its default), at most MAX_QUERIES."""
    requested = _DEFAULT_BOUND.get(method, MAX_QUERIES) if n is None else n
    return max(1, min(requested, MAX_QUERIES))


def method_named(name: str) -> TransformMethod:
    """`name` as a transform method; ValueError when it is not one of `TRANSFORM_METHODS`."""
    for method in TRANSFORM_METHODS:
        if name == method:
            return method
    raise ValueError(f"unknown transform method {name!r}; expected one of {TRANSFORM_METHODS}")


def transform(
    method: str,
    query: str,
    corpus: Corpus,
    n: int | None = None,
    *,
    neighbours: DenseNeighbours | None = None,
    options: TransformOptions | None = None,
) -> Transformed:
    """Run the named §7.8 transform; `n` bounds the queries returned (§15.5).

    Raises ValueError for a method not in `TRANSFORM_METHODS`.
    """
    known = method_named(method)
    context = TransformContext(corpus, neighbours, options or TransformOptions())
    result = TRANSFORMS[known](query, query_bound(known, n), context)
    if n is not None and n > MAX_QUERIES:
        clamped = f"{known}: n={n} clamped to {MAX_QUERIES}"
        result = replace(result, notes=(*result.notes, clamped))
    return result
