"""`multi-query`: variants of one query from pseudo-relevance feedback and dense neighbours.

Two well-established, LLM-free sources of paraphrase:

* RM3 feedback (`_feedback`): the top passages for the query suggest the
  corpus's own words for the need; each PRF variant is the query plus the
  next few expansion terms, in RM3 weight order.
* Dense neighbours (`_neighbours`): one query word at a time is replaced by a
  vocabulary word whose embedding is close (a synonym-like substitution). The
  words the corpus uses least are replaced first: they are the likeliest
  vocabulary mismatches.

Variants alternate between the two sources, the original query first, and a
variant analysed to the same set of terms as an earlier one is dropped.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

from rcpkit.engine.transform._feedback import relevance_model
from rcpkit.engine.transform._text import WORD, is_stopword, match_case, normalize_query, stems
from rcpkit.engine.transform._types import TransformContext, Transformed

__all__ = ["multi_query", "neighbour_variants", "prf_variants"]


def prf_variants(query: str, expansions: list[str], per_variant: int) -> Iterator[str]:
    """The query plus each successive slice of `per_variant` expansion terms."""
    for start in range(0, len(expansions), per_variant):
        yield " ".join([query, *expansions[start : start + per_variant]])


def neighbour_variants(query: str, context: TransformContext) -> Iterator[str]:
    """The query with one word replaced by a dense neighbour, rarest words first."""
    neighbours, corpus, options = context.neighbours, context.corpus, context.options
    if neighbours is None:
        return
    matches = [m for m in WORD.finditer(query) if m.group().isalpha()]
    matches = [m for m in matches if not is_stopword(m.group().casefold())]
    present = {stems(m.group())[0] for m in matches}
    first = {m.group().casefold(): m for m in reversed(matches)}  # first occurrence of each
    order = sorted(
        first.values(),
        key=lambda m: (corpus.document_frequency(m.group().casefold()), m.start()),
    )
    for match in order:
        found = neighbours.neighbours(
            match.group().casefold(), corpus, options.neighbours_per_term, options.min_similarity
        )
        for word, _similarity in found:
            if stems(word) and stems(word)[0] not in present:
                replacement = match_case(match.group(), word)
                yield query[: match.start()] + replacement + query[match.end() :]


def _alternate(*sources: Iterator[str]) -> Iterator[str]:
    for group in itertools.zip_longest(*sources):
        yield from (variant for variant in group if variant is not None)


def multi_query(query: str, limit: int, context: TransformContext) -> Transformed:
    """Up to `limit` queries: the original, then PRF and dense-neighbour variants."""
    query = normalize_query(query)
    options, notes = context.options, []
    wanted = bool(query) and limit > 1  # a bound of 1 is the original alone
    passages = context.corpus.search(query, options.feedback_passages) if wanted else []
    if wanted and not passages:
        notes.append("multi-query: no feedback passages")
    model = relevance_model(
        query,
        passages,
        context.corpus,
        options.expansion_terms,
        options.original_query_weight,
        options.min_feedback_documents,
    )
    query_stems = set(stems(query))
    expansions = [word for word, _ in model if stems(word) and stems(word)[0] not in query_stems]
    if wanted and context.neighbours is None:
        notes.append("multi-query: no embedder, dense neighbours skipped")
    candidates = _alternate(
        prf_variants(query, expansions, options.terms_per_variant),
        neighbour_variants(query, context),
    )
    queries, seen = [query], {frozenset(query_stems)}
    for variant in candidates:
        if len(queries) >= limit:
            break
        key = frozenset(stems(variant))
        if key not in seen:
            seen.add(key)
            queries.append(variant)
    return Transformed(
        queries=queries,
        hypothetical=None,
        rewritten=" | ".join(queries),
        merge="rrf" if len(queries) > 1 else "single",
        terms=tuple(model),
        notes=tuple(notes),
    )
