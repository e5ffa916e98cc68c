"""Property tests: for any text, every transform answers within its bound and never empty."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from transform_support import TableEmbedder, memory_corpus

from rcpkit.engine.transform import MAX_QUERIES, TRANSFORM_METHODS, DenseNeighbours, transform
from rcpkit.engine.transform._text import normalize_query

hypothesis = pytest.importorskip("hypothesis")
strategies = pytest.importorskip("hypothesis.strategies")
configuration = pytest.importorskip("hypothesis.configuration")

# Keep Hypothesis's cache out of the work tree.
configuration.set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "rcpkit-hypothesis")

_WORDS = [
    "What", "is", "the", "and", "how", "vs", "of", "compare", "with", "difference", "between",
    "BM25", "Paris", "2023", "5", "K", "\"quoted\"", "it", ",", "?", ".", "best", "radiator",
    "radiatr", "coolant", "automobile", "in", "at", "or", "日本", "é", "get_x", "v1.2",
]  # fmt: skip
_QUERIES = strategies.one_of(
    strategies.lists(strategies.sampled_from(_WORDS), max_size=14).map(" ".join),
    strategies.text(max_size=120),
)
CORPUS, _ = memory_corpus(
    [
        "An automobile that keeps overheating has a failing radiator or a coolant leak.",
        "The difference between BM25 and TF-IDF is length normalisation. It matters.",
        "Paris had 2.1 million inhabitants in 2023, the best count yet.",
    ]
)
NEIGHBOURS = DenseNeighbours(TableEmbedder({"car": ["automobile", "car", "vehicle"]}))


@hypothesis.settings(max_examples=150, deadline=None)
@hypothesis.given(query=_QUERIES, n=strategies.integers(1, 20))
def test_every_transform_of_any_text_is_bounded_and_non_empty(query: str, n: int) -> None:
    for method in TRANSFORM_METHODS:
        result = transform(method, query, CORPUS, n, neighbours=NEIGHBOURS)
        assert 1 <= len(result.queries) <= min(n, MAX_QUERIES)
        if normalize_query(query):
            assert all(part.strip() for part in result.queries), (method, result)
            assert result.rewritten.strip()
