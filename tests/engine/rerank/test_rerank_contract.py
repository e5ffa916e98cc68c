"""The `Reranker` contract, run against every implementation: real MiniLM, hashing, ONNX."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from rerank_support import build_tiny_cross_encoder, bundled_minilm

from rcpkit.engine.models import HashingEmbedder
from rcpkit.engine.rerank import (
    RERANK_METHODS,
    CrossEncoderReranker,
    LateInteractionReranker,
    Reranker,
)

QUERY = "red cat in the park"
PASSAGES = [
    "A red cat sat in the park all afternoon.",
    "The dog ran.",
    "",
    "Big blue dogs and small red cats played together in the city park near the river.",
    "Quarterly revenue rose.",
]


def _cross_encoder(directory: Path) -> Reranker:
    model = build_tiny_cross_encoder(directory / "tiny-contract")
    return CrossEncoderReranker.from_onnx_directory(model.directory, threads=1, batch_size=2)


FACTORIES: dict[str, Callable[[Path], Reranker]] = {
    "maxsim-hashing": lambda _: LateInteractionReranker(HashingEmbedder(64), batch_size=2),
    "maxsim-minilm": lambda _: LateInteractionReranker(bundled_minilm(), batch_size=2),
    "cross-encoder-onnx": _cross_encoder,
}


@pytest.fixture(params=sorted(FACTORIES), scope="module")
def reranker(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Reranker:
    return FACTORIES[request.param](tmp_path_factory.mktemp(request.param))


def test_every_reranker_satisfies_the_protocol_with_a_method_and_identity(
    reranker: Reranker,
) -> None:
    assert isinstance(reranker, Reranker)
    assert reranker.method in RERANK_METHODS
    assert reranker.identity


def test_there_is_one_float32_score_per_passage(reranker: Reranker) -> None:
    scores = reranker.score(QUERY, PASSAGES)
    assert scores.shape == (len(PASSAGES),)
    assert scores.dtype == np.float32
    assert np.isfinite(scores).all()


def test_scores_follow_the_passages_input_order(reranker: Reranker) -> None:
    order = [3, 0, 4, 2, 1]
    scores = reranker.score(QUERY, PASSAGES)
    permuted = reranker.score(QUERY, [PASSAGES[i] for i in order])
    np.testing.assert_allclose(permuted, scores[order], rtol=1e-5, atol=1e-5)


def test_a_batch_scores_as_each_passage_alone(reranker: Reranker) -> None:
    together = reranker.score(QUERY, PASSAGES)
    alone = np.concatenate([reranker.score(QUERY, [passage]) for passage in PASSAGES])
    np.testing.assert_allclose(together, alone, rtol=1e-5, atol=1e-5)


def test_scoring_is_deterministic(reranker: Reranker) -> None:
    np.testing.assert_array_equal(reranker.score(QUERY, PASSAGES), reranker.score(QUERY, PASSAGES))


def test_no_passages_give_an_empty_float32_array(reranker: Reranker) -> None:
    scores = reranker.score(QUERY, [])
    assert scores.shape == (0,)
    assert scores.dtype == np.float32


def test_a_checkpoint_that_returns_changes_nothing(reranker: Reranker) -> None:
    calls: list[None] = []
    checked = reranker.score(QUERY, PASSAGES, lambda: calls.append(None))
    np.testing.assert_array_equal(checked, reranker.score(QUERY, PASSAGES))
