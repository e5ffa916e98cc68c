"""`rewrite`: normalisation and spelling correction against the corpus vocabulary."""

from __future__ import annotations

import pytest
from transform_support import memory_corpus

from rcpkit.engine.transform import IndexedCorpus, VocabularyIndex, transform
from rcpkit.engine.transform._rewrite import correct_word, rewrite_query

PASSAGES = [
    "Retrieval augmented generation grounds answers in retrieved passages.",
    "The HNSW graph index gives fast approximate nearest neighbour search.",
    "BM25 ranks by term frequency; retrieval quality depends on the index.",
    "Version v1.2.3 renamed getUserName to get_user_name in the client.",
    "Indexes are rebuilt nightly in 2023 builds.",
    "Their indexing pipeline runs every night.",
    "Thermal conductivity of copper is high.",
]
CORPUS, _ = memory_corpus(PASSAGES)


def _corpus(words: dict[str, int]) -> IndexedCorpus:
    return IndexedCorpus(VocabularyIndex(words.items()), 100, lambda query, k: [])


def test_rewrite_returns_one_query_which_is_also_the_rewritten_query() -> None:
    result = transform("rewrite", "retreival quality", CORPUS)
    assert result.queries == ["retrieval quality"]
    assert result.rewritten == "retrieval quality"
    assert result.hypothetical is None
    assert result.merge == "single"


def test_a_misspelled_word_is_corrected_to_the_corpus_word_in_its_own_case() -> None:
    assert rewrite_query("Retreival Augmnted generation", CORPUS) == (
        "Retrieval Augmented generation"
    )
    assert rewrite_query("THERMAL CONDUCTIVTY", CORPUS) == "THERMAL CONDUCTIVITY"


def test_in_vocabulary_numeric_and_code_like_tokens_are_left_alone() -> None:
    query = "index 2023 HNSW bm26 v1.2.4 getUserNme get_usr_name retrieval"
    assert rewrite_query(query, CORPUS) == query


def test_a_word_is_never_corrected_into_a_stopword() -> None:
    corpus = _corpus({"the": 100, "thaw": 1})
    assert correct_word("thw", corpus) == "thaw"
    assert correct_word("thw", _corpus({"the": 100})) == "thw"


def test_the_nearest_word_wins_then_the_most_frequent() -> None:
    corpus = _corpus({"ranking": 3, "banking": 50, "rankings": 90})
    assert correct_word("rankng", corpus) == "ranking"  # 1 edit beats 2 edits
    assert correct_word("ganking", corpus) == "banking"  # 1 edit each: higher df
    assert correct_word("ranked", corpus) == "ranked"  # nothing within budget


def test_short_words_get_a_smaller_edit_budget() -> None:
    corpus = _corpus({"graph": 10, "rag": 10})
    assert correct_word("grapj", corpus) == "graph"
    assert correct_word("rga", corpus) == "rag"  # one swap
    assert correct_word("grpj", corpus) == "grpj"  # 2 edits needed, budget 1
    assert correct_word("rg", corpus) == "rg"  # under 3 letters: never


def test_an_inflection_of_a_corpus_word_is_kept_but_a_misspelling_is_corrected() -> None:
    corpus = _corpus({"index": 10, "automobile": 4})
    assert correct_word("indexes", corpus) == "indexes"  # the plural of a corpus word
    assert correct_word("automobil", corpus) == "automobile"  # same stem, still a typo


@pytest.mark.parametrize(
    ("raw", "normalised"),
    [
        ("ｒｅｔｒｉｅｖａｌ\u3000quality", "retrieval quality"),  # full-width forms
        ("re\u200btrieval\t\n  quality", "retrieval quality"),  # zero-width space, runs
        ("ﬁle index", "file index"),  # ligature
    ],
)
def test_rewrite_normalises_unicode_and_whitespace(raw: str, normalised: str) -> None:
    assert transform("rewrite", raw, CORPUS).queries == [normalised]


def test_words_of_scripts_without_case_are_left_alone() -> None:
    corpus = _corpus({"检索系统": 5})
    assert rewrite_query("检索系", corpus) == "检索系"


def test_punctuation_around_a_word_is_kept() -> None:
    assert rewrite_query("(retreival)?", CORPUS) == "(retrieval)?"
