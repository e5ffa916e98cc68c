"""The bounded LRU of passage token matrices behind MaxSim reranking."""

from __future__ import annotations

import numpy as np
import pytest
from rerank_support import CountingEmbedder, bundled_minilm

from rcpkit.engine.models import HashingEmbedder
from rcpkit.engine.rerank import LateInteractionReranker, TokenCacheInfo
from rcpkit.engine.rerank._token_cache import TokenMatrixCache, text_key

PASSAGES = [f"passage number {i} about topic {i % 3}" for i in range(10)]


def _counting(**options: int) -> tuple[LateInteractionReranker, CountingEmbedder]:
    embedder = CountingEmbedder(HashingEmbedder(32))
    return LateInteractionReranker(embedder, **options), embedder


def test_warm_scores_are_identical_to_cold_scores_with_minilm() -> None:
    reranker = LateInteractionReranker(bundled_minilm())
    passages = ["Cached token matrices must not change scores.", "Nor their order.", ""]
    cold = reranker.score("do caches change scores?", passages)
    warm = reranker.score("do caches change scores?", passages)
    np.testing.assert_array_equal(cold, warm)
    assert reranker.cache_info().hits == 3


def test_a_cached_passage_is_not_embedded_again() -> None:
    reranker, embedder = _counting()
    reranker.score("topic", PASSAGES[:4])
    reranker.score("another query", PASSAGES[2:6])
    assert embedder.documents_embedded() == PASSAGES[:4] + PASSAGES[4:6]
    assert reranker.cache_info() == TokenCacheInfo(
        hits=2, misses=6, entries=6, bytes=6 * 6 * 32 * 4
    )


def test_a_passage_repeated_within_one_request_is_embedded_once() -> None:
    reranker, embedder = _counting(cache_size=0)
    scores = reranker.score("topic", [PASSAGES[0], "short", PASSAGES[0]])
    assert embedder.documents_embedded() == ["short", PASSAGES[0]], "shortest first"
    assert scores[0] == scores[2]


def test_queries_are_not_cached() -> None:
    reranker, embedder = _counting()
    reranker.score("same query", PASSAGES[:1])
    reranker.score("same query", PASSAGES[:1])
    assert [kind for kind, _ in embedder.calls] == ["query", "document", "query"]


def test_the_cache_keeps_at_most_cache_size_entries_evicting_the_least_recently_used() -> None:
    reranker, embedder = _counting(cache_size=3)
    reranker.score("q", PASSAGES[:3])
    reranker.score("q", PASSAGES[:1])  # PASSAGES[0] is now the most recently used
    reranker.score("q", PASSAGES[3:4])  # evicts PASSAGES[1]
    assert reranker.cache_info().entries == 3
    embedder.calls.clear()
    reranker.score("q", [PASSAGES[0], PASSAGES[2], PASSAGES[3], PASSAGES[1]])
    assert embedder.documents_embedded() == [PASSAGES[1]]


def test_the_cache_keeps_at_most_cache_bytes_of_matrices() -> None:
    matrix_bytes = 6 * 32 * 4  # six words of 32 float32
    reranker, _ = _counting(cache_bytes=2 * matrix_bytes)
    reranker.score("q", PASSAGES)
    info = reranker.cache_info()
    assert info.entries == 2
    assert info.bytes == 2 * matrix_bytes


def test_a_matrix_larger_than_the_byte_bound_is_not_cached() -> None:
    cache = TokenMatrixCache(max_entries=8, max_bytes=100)
    cache.put(b"big", np.zeros((10, 10), np.float32))
    assert cache.get(b"big") is None
    assert cache.info().entries == 0


def test_a_zero_cache_size_disables_caching() -> None:
    reranker, embedder = _counting(cache_size=0)
    reranker.score("q", PASSAGES[:2])
    reranker.score("q", PASSAGES[:2])
    assert embedder.documents_embedded() == PASSAGES[:2] * 2
    assert reranker.cache_info().entries == 0


def test_cached_matrices_are_shared_read_only() -> None:
    reranker, _ = _counting()
    (first,) = reranker.token_matrices(PASSAGES[:1])
    (again,) = reranker.token_matrices(PASSAGES[:1])
    assert again is first
    with pytest.raises(ValueError, match="read-only"):
        first[0, 0] = 1.0


def test_clearing_the_cache_forgets_every_matrix() -> None:
    reranker, embedder = _counting()
    reranker.score("q", PASSAGES[:2])
    reranker.clear_cache()
    assert reranker.cache_info().entries == 0
    reranker.score("q", PASSAGES[:2])
    assert len(embedder.documents_embedded()) == 4


def test_text_keys_are_fixed_size_digests_that_tell_texts_apart() -> None:
    assert len(text_key("x" * 100_000)) == 16
    assert text_key("a") != text_key("b")
    assert text_key("\ud800 lone surrogate") != text_key("")


def test_negative_cache_bounds_are_rejected() -> None:
    with pytest.raises(ValueError, match="bounds"):
        TokenMatrixCache(max_entries=-1, max_bytes=0)
