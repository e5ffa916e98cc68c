"""The SymSpell-style vocabulary index and the edit distance it verifies with."""

from __future__ import annotations

import random
import string

import pytest

from rcpkit.engine.transform import VocabularyIndex
from rcpkit.engine.transform._distance import edit_distance


def _levenshtein_osa(a: str, b: str) -> int:
    table = [
        [max(i, j) if min(i, j) == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)
    ]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
    return table[-1][-1]


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("retrieval", "retrieval", 0),
        ("retreival", "retrieval", 1),  # one adjacent swap
        ("fotosynthesis", "photosynthesis", 2),
        ("kitten", "sitting", 3),
        ("", "abc", 3),
    ],
)
def test_edit_distance_counts_insertions_deletions_substitutions_and_swaps(
    a: str, b: str, expected: int
) -> None:
    assert edit_distance(a, b, 5) == expected


def test_edit_distance_stops_at_its_limit() -> None:
    assert edit_distance("kitten", "sitting", 1) == 2
    assert edit_distance("a", "abcdef", 2) == 3


def test_edit_distance_agrees_with_the_full_dynamic_program() -> None:
    generator = random.Random(7)
    for _ in range(500):
        a = "".join(generator.choices("abcd", k=generator.randint(0, 7)))
        b = "".join(generator.choices("abcd", k=generator.randint(0, 7)))
        exact = _levenshtein_osa(a, b)
        assert edit_distance(a, b, 2) == min(exact, 3), (a, b)


def test_lookup_finds_exactly_the_words_a_full_scan_finds() -> None:
    generator = random.Random(11)
    words = {
        "".join(generator.choices(string.ascii_lowercase[:6], k=generator.randint(3, 11)))
        for _ in range(300)
    }
    index = VocabularyIndex((word, 1 + len(word) % 4) for word in sorted(words))
    for _ in range(60):
        probe = "".join(generator.choices(string.ascii_lowercase[:6], k=generator.randint(3, 11)))
        exact = {w: _levenshtein_osa(probe, w) for w in words}
        for distance in (1, 2):
            expected = {w for w, d in exact.items() if d <= distance}
            assert {w for w, _ in index.words_like(probe, distance)} == expected, probe


def test_lookup_orders_nearest_first_then_most_frequent() -> None:
    index = VocabularyIndex([("cart", 5), ("care", 50), ("cat", 1), ("carts", 90)])
    assert index.words_like("carx", 2)[:3] == [("care", 50), ("cart", 5), ("carts", 90)]


def test_numbers_codes_and_fragments_keep_their_df_but_are_never_suggested() -> None:
    index = VocabularyIndex([("2023", 9), ("bm25", 4), ("ab", 3), ("index", 2)])
    assert index.document_frequency("2023") == 9
    assert index.document_frequency("bm25") == 4
    assert index.words_like("2024", 2) == []
    assert index.words_like("bm24", 2) == []
    assert index.indexed_words == 1
    assert len(index) == 4


def test_frequent_words_are_ordered_by_df_then_word() -> None:
    index = VocabularyIndex([("b", 2), ("a", 2), ("c", 9), ("gone", 0)])
    assert index.frequent_words(3) == [("c", 9), ("a", 2), ("b", 2)]
    assert index.document_frequency("gone") == 0


def test_only_the_most_frequent_words_get_deletion_entries() -> None:
    index = VocabularyIndex([("alpha", 3), ("gamma", 2), ("delta", 1)], max_words=2)
    assert index.indexed_words == 2
    assert index.words_like("delts", 1) == []
    assert index.words_like("gammo", 1) == [("gamma", 2)]
