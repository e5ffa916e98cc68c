"""Transform methods improve recall on a constructed case, measured with BM25 over `analyze`.

One small corpus, three needs. Each case measures recall at the same k with
and without the transform; the rankings of a transform's queries are merged
the way the transform says (`Transformed.merge`).
"""

from __future__ import annotations

from transform_support import Bm25, memory_corpus

from rcpkit.engine.transform import Transformed, merge_rankings, transform

PASSAGES = [
    # 0-1: photosynthesis
    "Photosynthesis converts light energy into chemical energy stored in glucose.",
    "Chlorophyll in the chloroplasts absorbs red and blue light and reflects green.",
    # 2-5: an overheating car, and two distractors that share one word with the question
    "An automobile that keeps overheating usually has a failing radiator or a coolant leak; "
    "check the radiator cap and the coolant level first.",
    "A cracked radiator lets coolant escape, so the thermostat reads hot. A mechanic can "
    "pressure-test the radiator and replace the hoses.",
    "A search engine crawls pages, builds an inverted index and ranks results for each query.",
    "Engine oil lubricates moving parts and must be changed every few thousand miles.",
    # 6-14: melting and boiling points
    "Mercury was used in thermometers and barometers for centuries because it stays liquid; "
    "the boiling point of mercury is 356.7 degrees Celsius.",
    "Gallium is a soft metal used in semiconductors and LEDs; the melting point of gallium is "
    "29.8 degrees Celsius, so it melts in your hand.",
    "The melting point and the boiling point of a substance both depend on pressure: at "
    "altitude the boiling point drops and the melting point barely moves.",
    "Water boils at 100 degrees Celsius at sea level.",
    "The boiling point of ethanol is lower than the boiling point of water.",
    "Iron has a melting point of 1538 degrees Celsius.",
    "Mercury is the planet closest to the Sun.",
    "Mercury poisoning damages the nervous system.",
    "Gallium arsenide is used in solar cells.",
]
CORPUS, BM25 = memory_corpus(PASSAGES)


def _recall(ranking: list[int], relevant: set[int], k: int) -> float:
    return len(relevant & set(ranking[:k])) / len(relevant)


def _plain(query: str, k: int) -> list[int]:
    return [index for index, _ in BM25.rank(query, k)]


def _transformed(result: Transformed, bm25: Bm25, depth: int = 20) -> list[int]:
    return merge_rankings(result.merge, [bm25.rank(query, depth) for query in result.queries])


def test_a_misspelled_query_finds_its_passage_only_after_rewrite() -> None:
    query, relevant, k = "how does fotosynthesis work", {0}, 3
    result = transform("rewrite", query, CORPUS)
    assert result.queries == ["how does photosynthesis work"]
    assert _recall(_plain(query, k), relevant, k) == 0.0
    assert _recall(_transformed(result, BM25), relevant, k) == 1.0


def test_a_vocabulary_mismatch_gains_recall_with_multi_query_feedback() -> None:
    # Passage 3 never says "automobile" or "overheating": only feedback finds it.
    query, relevant, k = "automobile overheating", {2, 3}, 2
    result = transform("multi-query", query, CORPUS, n=3)
    assert result.queries[0] == query and len(result.queries) == 3
    assert result.merge == "rrf"
    assert _recall(_plain(query, 20), relevant, 20) == 0.5  # at any depth
    assert _recall(_transformed(result, BM25), relevant, k) == 1.0


def test_a_two_part_question_retrieves_both_passages_only_with_decompose() -> None:
    query, relevant, k = (
        "What is the boiling point of mercury and the melting point of gallium?",
        {6, 7},
        2,
    )
    result = transform("decompose", query, CORPUS)
    assert result.queries == [
        "What is the boiling point of mercury?",
        "What is the melting point of gallium?",
    ]
    assert _recall(_plain(query, k), relevant, k) == 0.5
    assert _recall(_transformed(result, BM25), relevant, k) == 1.0
