"""MaxSim late-interaction reranking (§7.5, §7.6 `colbert`) over the real MiniLM."""

from __future__ import annotations

import numpy as np
import pytest
from rerank_support import CountingEmbedder, bundled_minilm

from rcpkit.engine.models import HashingEmbedder
from rcpkit.engine.rerank import LateInteractionReranker


@pytest.fixture(scope="module")
def minilm_reranker() -> LateInteractionReranker:
    return LateInteractionReranker(bundled_minilm())


RANKING_CASES = [
    (
        "How do I reset a forgotten password?",
        "To reset a forgotten password, open the login page and follow the recovery link.",
        [
            "The Alps offer hundreds of hiking trails for every level.",
            "Quarterly revenue grew by twelve percent compared with last year.",
            "Tomatoes need full sun and regular watering to ripen.",
        ],
    ),
    (
        "What is the boiling point of water at sea level?",
        "At sea level, water boils at 100 degrees Celsius.",
        [
            "The stock market closed lower after the announcement.",
            "Guitar strings should be replaced every few months.",
            "The museum opens at nine on weekdays.",
        ],
    ),
    (
        "Which medication lowers blood pressure?",
        "ACE inhibitors are a common medication to lower high blood pressure.",
        [
            "The train to Berlin departs from platform four.",
            "Bake the bread for forty minutes until golden.",
            "A new smartphone model was released this autumn.",
        ],
    ),
]


@pytest.mark.parametrize(("query", "relevant", "irrelevant"), RANKING_CASES)
def test_maxsim_over_minilm_ranks_the_answering_passage_above_unrelated_ones(
    minilm_reranker: LateInteractionReranker, query: str, relevant: str, irrelevant: list[str]
) -> None:
    passages = [*irrelevant[:1], relevant, *irrelevant[1:]]
    scores = minilm_reranker.score(query, passages)
    assert int(np.argmax(scores)) == 1
    assert scores[1] > max(np.delete(scores, 1))


def test_scores_equal_a_brute_force_maxsim_over_the_embedders_token_vectors(
    minilm_reranker: LateInteractionReranker,
) -> None:
    query, relevant, irrelevant = RANKING_CASES[0]
    passages = [relevant, *irrelevant, ""]
    minilm = bundled_minilm()
    query_tokens = minilm.embed_tokens([query], "query")[0]
    expected = []
    for passage_tokens in minilm.embed_tokens(passages, "document"):
        best = [max((q @ d for d in passage_tokens), default=0.0) for q in query_tokens]
        expected.append(sum(best) if len(passage_tokens) else 0.0)
    np.testing.assert_allclose(minilm_reranker.score(query, passages), expected, rtol=1e-5)


def test_scoring_a_batch_equals_scoring_each_passage_alone() -> None:
    reranker = LateInteractionReranker(bundled_minilm(), batch_size=3, cache_size=0)
    query, relevant, irrelevant = RANKING_CASES[1]
    passages = [relevant, *irrelevant, relevant + " " + irrelevant[0]]
    together = reranker.score(query, passages)
    alone = np.concatenate([reranker.score(query, [passage]) for passage in passages])
    np.testing.assert_allclose(together, alone, rtol=1e-5, atol=1e-5)


def test_the_score_is_the_raw_maxsim_sum_not_a_mean() -> None:
    reranker = LateInteractionReranker(HashingEmbedder(64))
    # Every query word appears in the passage: each contributes a best cosine of 1.
    assert reranker.score("red cat sat", ["the red cat sat down"]).tolist() == pytest.approx([3.0])


def test_maxsim_advertises_colbert_with_the_embedders_identity_and_cosine() -> None:
    embedder = HashingEmbedder(32)
    reranker = LateInteractionReranker(embedder)
    assert reranker.method == "colbert"
    assert reranker.identity == "maxsim:rcpkit-hashing-v1:32"
    assert reranker.similarity == "cosine"
    assert reranker.dimension == 32
    assert reranker.embedder is embedder


def test_no_passages_give_no_scores_and_no_model_call() -> None:
    embedder = CountingEmbedder(HashingEmbedder(16))
    scores = LateInteractionReranker(embedder).score("query", [])
    assert scores.shape == (0,)
    assert scores.dtype == np.float32
    assert embedder.calls == []


def test_an_empty_passage_or_empty_query_scores_zero() -> None:
    reranker = LateInteractionReranker(HashingEmbedder(16))
    assert reranker.score("cat", ["", "cat"]).tolist() == [0.0, pytest.approx(1.0)]
    assert reranker.score("", ["cat", "dog"]).tolist() == [0.0, 0.0]


def test_token_matrices_serve_embed_multi_as_the_embedder_gives_them() -> None:
    minilm = bundled_minilm()
    reranker = LateInteractionReranker(minilm)
    texts = ["Late interaction keeps one vector per token.", "Short."]
    for kind in ("query", "document"):
        matrices = reranker.token_matrices(texts, kind)
        for matrix, expected in zip(matrices, minilm.embed_tokens(texts, kind), strict=True):
            np.testing.assert_allclose(matrix, expected, atol=1e-6)
            np.testing.assert_allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-5)


def test_an_unknown_kind_is_rejected() -> None:
    with pytest.raises(ValueError, match="kind"):
        LateInteractionReranker(HashingEmbedder(16)).token_matrices(["x"], "passage")  # type: ignore[arg-type]


def test_a_batch_size_below_one_is_rejected() -> None:
    with pytest.raises(ValueError, match="batch_size"):
        LateInteractionReranker(HashingEmbedder(16), batch_size=0)
