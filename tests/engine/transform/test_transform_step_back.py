"""`step-back`: a broader query without the question's specific constraints."""

from __future__ import annotations

import pytest
from transform_support import memory_corpus

from rcpkit.engine.transform import transform
from rcpkit.engine.transform._step_back import step_back_query

CORPUS, _ = memory_corpus(["A passage about anything at all."])


@pytest.mark.parametrize(
    ("query", "broader"),
    [
        ("What was the population of Paris in 2023?", "What was the population?"),
        ("thermal conductivity of copper at 5 K", "thermal conductivity of copper"),
        ("How does HNSW scale to 1 billion vectors?", "How does HNSW scale to vectors?"),
        ("Revenue growth of 15% from 2010 to 2020", "Revenue growth"),
        ("sales figures for May 2021", "sales figures"),
        ("What happened on 2023-05-01?", "What happened?"),
    ],
)
def test_numbers_years_dates_and_quantities_are_dropped(query: str, broader: str) -> None:
    assert step_back_query(query) == broader


@pytest.mark.parametrize(
    ("query", "broader"),
    [
        (
            "Estella Leopold went to which school between Aug 1954 and Nov 1954?",
            "went to which school?",
        ),
        ("Which rivers flow through the United States of America?", "Which rivers flow?"),
        ("How did the Bank of England set interest rates?", "How did set interest rates?"),
    ],
)
def test_named_entities_found_by_capitalisation_are_dropped(query: str, broader: str) -> None:
    assert step_back_query(query) == broader


def test_quoted_strings_and_superlatives_are_dropped() -> None:
    assert step_back_query('What does the error "connection reset by peer" mean?') == (
        "What does the error mean?"
    )
    assert step_back_query("What are the best vector databases in 2024?") == (
        "What are the vector databases?"
    )
    assert step_back_query("the happiest countries since the 1990s") == "the countries"


def test_acronyms_and_code_like_tokens_are_kept_as_the_core_concept() -> None:
    assert step_back_query("Does BM25 beat SPLADE on MS MARCO in 2022?") == (
        "Does BM25 beat SPLADE on MS MARCO?"
    )


@pytest.mark.parametrize(
    ("query", "broader"),
    [
        ("Who is Albert Einstein?", "Albert Einstein"),  # the head noun phrase
        ("2023?", "2023?"),  # nothing else to fall back to
    ],
)
def test_the_broader_query_is_never_empty(query: str, broader: str) -> None:
    assert step_back_query(query) == broader


def test_step_back_returns_the_broader_query_first_then_the_original() -> None:
    result = transform("step-back", "What was the population of Paris in 2023?", CORPUS)
    assert result.queries == [
        "What was the population?",
        "What was the population of Paris in 2023?",
    ]
    assert result.rewritten == "What was the population?"
    assert result.merge == "rrf"
    assert result.hypothetical is None


def test_a_query_without_constraints_is_its_own_step_back() -> None:
    result = transform("step-back", "How do vector databases handle deletes?", CORPUS)
    assert result.queries == ["How do vector databases handle deletes?"]
    assert result.merge == "single"
