"""`decompose`: multi-part questions split into sub-queries by surface rules."""

from __future__ import annotations

import pytest
from transform_support import memory_corpus

from rcpkit.engine.transform import MAX_QUERIES, transform

CORPUS, _ = memory_corpus(["A passage about anything at all."])


def _parts(query: str, n: int | None = None) -> list[str]:
    return transform("decompose", query, CORPUS, n).queries


@pytest.mark.parametrize(
    ("query", "parts"),
    [
        (
            "What is the boiling point of mercury? What is the melting point of gallium?",
            ["What is the boiling point of mercury?", "What is the melting point of gallium?"],
        ),
        (
            "HNSW trades memory for speed. How does IVF compare?",
            ["HNSW trades memory for speed.", "How does IVF compare?"],
        ),
    ],
)
def test_separate_sentences_and_questions_become_separate_parts(
    query: str, parts: list[str]
) -> None:
    assert _parts(query) == parts


def test_coordinated_questions_split_and_a_pronoun_takes_the_first_topic() -> None:
    assert _parts("What is BM25 and how does it work?") == ["What is BM25?", "how does BM25 work?"]
    assert _parts("Who founded Google and when was it founded?") == [
        "Who founded Google?",
        "when was Google founded?",
    ]


@pytest.mark.parametrize(
    ("query", "parts"),
    [
        (
            "What is the difference between BM25 and TF-IDF for ranking?",
            ["BM25 for ranking?", "TF-IDF for ranking?"],
        ),
        (
            "Compare HNSW with IVF on recall and latency",
            ["HNSW on recall and latency", "IVF on recall and latency"],
        ),
        (
            "BM25 vs SPLADE for long documents",
            ["BM25 for long documents", "SPLADE for long documents"],
        ),
        ("speed of light versus sound", ["speed of light", "speed of sound"]),
        ("How does IVF compare to HNSW in recall?", ["IVF in recall?", "HNSW in recall?"]),
        (
            "dense retrieval compared to sparse retrieval in recall",
            ["dense retrieval in recall", "sparse retrieval in recall"],
        ),
    ],
)
def test_a_comparison_gives_one_sub_query_per_side_with_the_shared_predicate(
    query: str, parts: list[str]
) -> None:
    assert _parts(query) == parts


@pytest.mark.parametrize(
    ("query", "parts"),
    [
        (
            "What are the causes, symptoms and treatments of diabetes?",
            [
                "What are the causes of diabetes?",
                "What are symptoms of diabetes?",
                "What are treatments of diabetes?",
            ],
        ),
        (
            "What is the population of France, Germany and Italy?",
            [
                "What is the population of France?",
                "What is the population of Germany?",
                "What is the population of Italy?",
            ],
        ),
        (
            "What is the boiling point of mercury and the melting point of gallium?",
            ["What is the boiling point of mercury?", "What is the melting point of gallium?"],
        ),
        (
            "What are the pros and cons of dense retrieval?",
            ["What are the pros of dense retrieval?", "What are cons of dense retrieval?"],
        ),
    ],
)
def test_a_list_gives_one_sub_query_per_item_with_the_shared_parts(
    query: str, parts: list[str]
) -> None:
    assert _parts(query) == parts


@pytest.mark.parametrize(
    "query",
    [
        "How does vector search work?",
        "What is the relationship between sleep and memory?",
        "Where to buy salt and pepper",
        "How do precision and recall trade off?",
    ],
)
def test_a_single_part_question_returns_itself(query: str) -> None:
    result = transform("decompose", query, CORPUS)
    assert result.queries == [query]
    assert result.rewritten == query
    assert result.merge == "single"


def test_sub_queries_are_merged_round_robin_and_summarised_in_rewritten() -> None:
    result = transform("decompose", "BM25 vs SPLADE for long documents", CORPUS)
    assert result.merge == "interleave"
    assert result.rewritten == "BM25 for long documents | SPLADE for long documents"
    assert result.hypothetical is None


def test_the_number_of_sub_queries_is_bounded() -> None:
    many = " ".join(f"What is topic{i}?" for i in range(12))
    assert len(_parts(many)) == MAX_QUERIES
    assert _parts(many, n=3) == ["What is topic0?", "What is topic1?", "What is topic2?"]
    assert any("kept the first 3" in note for note in transform("decompose", many, CORPUS, 3).notes)


def test_repeated_parts_are_kept_once() -> None:
    assert _parts("What is BM25? What is BM25?") == ["What is BM25?"]
