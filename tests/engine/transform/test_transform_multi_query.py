"""`multi-query`: RM3 feedback variants and dense-neighbour replacements, bounded."""

from __future__ import annotations

import math

import pytest
from transform_support import TableEmbedder, memory_corpus

from rcpkit.engine.text.analysis import analyze
from rcpkit.engine.transform import MAX_QUERIES, DenseNeighbours, TransformOptions, transform

PASSAGES = [
    "An automobile that keeps overheating usually has a failing radiator or a coolant leak.",
    "Check the radiator cap and the coolant level when the automobile runs hot.",
    "A cracked radiator lets coolant escape; a mechanic replaces the hoses.",
    "Car insurance premiums depend on the driver's age.",
    "A vehicle inspection covers brakes, lights and tyres.",
    "Search engines rank pages for each query.",
    # Unrelated passages, so that idf behaves as it does in a real corpus.
    "Bread dough rises when yeast ferments the sugars in flour.",
    "The violin has four strings tuned in perfect fifths.",
    "Glaciers carve valleys as they slowly move downhill.",
    "A sonnet has fourteen lines and a fixed rhyme scheme.",
    "Honeybees communicate the direction of flowers by dancing.",
    "Tides are caused by the gravitational pull of the moon.",
    "Chess openings are memorised sequences of early moves.",
    "Volcanic soil is rich in minerals and very fertile.",
]
CORPUS, _ = memory_corpus(PASSAGES)
SYNONYMS = {
    "car": ["automobile", "car", "vehicle"],
    "hot": ["overheating", "hot"],
}


def _neighbours() -> DenseNeighbours:
    return DenseNeighbours(TableEmbedder(SYNONYMS))


def test_the_original_query_comes_first_and_variants_add_feedback_terms() -> None:
    result = transform("multi-query", "automobile overheating", CORPUS, n=3)
    assert result.queries[0] == "automobile overheating"
    assert len(result.queries) == 2  # two expansion terms pass the two-passage rule
    assert result.merge == "rrf"
    assert result.hypothetical is None
    assert result.rewritten == " | ".join(result.queries)
    assert "radiator" in result.queries[1] and "coolant" in result.queries[1]


def test_the_relevance_model_interpolates_query_and_feedback_and_sums_to_one() -> None:
    result = transform("multi-query", "automobile overheating", CORPUS, n=2)
    words = [word for word, _ in result.terms]
    assert words[:2] == ["automobile", "overheating"]
    assert {"radiator", "coolant"} <= set(words)
    assert math.isclose(sum(weight for _, weight in result.terms), 1.0)
    weights = dict(result.terms)
    assert weights["automobile"] > weights["radiator"]  # λ = 0.5 keeps the query dominant


def test_expansion_terms_come_only_from_the_feedback_passages() -> None:
    options = TransformOptions(feedback_passages=2)
    result = transform("multi-query", "automobile overheating", CORPUS, n=8, options=options)
    feedback = " ".join(PASSAGES[:2]).casefold()
    for word, _ in result.terms:
        assert word in feedback


@pytest.mark.parametrize("n", [1, 2, 5, 8, 50])
def test_the_number_of_queries_is_bounded_by_n_and_by_max_queries(n: int) -> None:
    result = transform("multi-query", "automobile overheating", CORPUS, n, neighbours=_neighbours())
    assert 1 <= len(result.queries) <= min(n, MAX_QUERIES)
    if n > MAX_QUERIES:
        assert any("clamped" in note for note in result.notes)


def test_variants_are_distinct_after_analysis() -> None:
    result = transform("multi-query", "automobile overheating", CORPUS, 8, neighbours=_neighbours())
    keys = [frozenset(analyze(query)) for query in result.queries]
    assert len(keys) == len(set(keys))


def test_a_dense_neighbour_replaces_one_query_word_at_a_time() -> None:
    options = TransformOptions(feedback_passages=1, expansion_terms=1)
    result = transform(
        "multi-query",
        "Automobile overheating",
        CORPUS,
        4,
        neighbours=_neighbours(),
        options=options,
    )
    replaced = [query for query in result.queries if "radiator" not in query][1:]
    assert "Car overheating" in replaced or "Vehicle overheating" in replaced
    assert "Automobile hot" in replaced
    for query in replaced:
        assert len(set(query.split()) - {"Automobile", "overheating"}) == 1


def test_the_vocabulary_vectors_are_built_lazily_once_and_bounded() -> None:
    embedder = TableEmbedder(SYNONYMS)
    neighbours = DenseNeighbours(embedder, vocabulary_size=12)
    assert neighbours.cached_words == 0 and embedder.calls == []
    transform("multi-query", "automobile overheating", CORPUS, 8, neighbours=neighbours)
    vocabulary = embedder.calls[0]
    frequent = [word for word, _ in CORPUS.frequent_words(12)]
    assert vocabulary == [word for word in frequent if analyze(word)]  # stopwords left out
    assert neighbours.cached_words == len(vocabulary) <= 12
    transform("multi-query", "automobile overheating", CORPUS, 8, neighbours=neighbours)
    assert embedder.calls.count(vocabulary) == 1
    neighbours.invalidate()
    transform("multi-query", "automobile overheating", CORPUS, 8, neighbours=neighbours)
    assert embedder.calls.count(vocabulary) == 2


def test_without_feedback_or_embedder_the_original_query_is_returned_alone() -> None:
    result = transform("multi-query", "zzz qqq", CORPUS, 5)
    assert result.queries == ["zzz qqq"]
    assert result.merge == "single"
    assert "multi-query: no feedback passages" in result.notes
