"""Cancellation: rerankers call the checkpoint before each model batch, stop when it raises."""

from __future__ import annotations

from pathlib import Path

import pytest
from rerank_support import (
    CancelledByTest,
    CountingEmbedder,
    CountingScorer,
    RaiseOnCall,
    build_tiny_cross_encoder,
)

from rcpkit.engine.models import HashingEmbedder
from rcpkit.engine.rerank import CrossEncoderReranker, LateInteractionReranker

PASSAGES = [f"cat sat on mat {'big ' * i}" for i in range(7)]


@pytest.fixture(scope="module")
def tiny_directory(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_cross_encoder(tmp_path_factory.mktemp("checkpoint") / "tiny").directory


def test_maxsim_calls_the_checkpoint_before_the_query_and_each_passage_batch() -> None:
    checkpoint = RaiseOnCall(n=10**9)
    LateInteractionReranker(HashingEmbedder(16), batch_size=3).score("cat", PASSAGES, checkpoint)
    assert checkpoint.calls == 1 + 3  # the query, then batches of 3, 3 and 1 passages


def test_a_raising_checkpoint_stops_maxsim_after_the_first_passage_batch() -> None:
    embedder = CountingEmbedder(HashingEmbedder(16))
    reranker = LateInteractionReranker(embedder, batch_size=2)
    with pytest.raises(CancelledByTest):
        reranker.score("cat", PASSAGES, RaiseOnCall(n=3))  # query, batch 1, then stop
    assert [kind for kind, _ in embedder.calls] == ["query", "document"]
    assert embedder.documents_embedded() == PASSAGES[:2]


def test_batches_finished_before_a_cancel_stay_cached_for_the_retry() -> None:
    embedder = CountingEmbedder(HashingEmbedder(16))
    reranker = LateInteractionReranker(embedder, batch_size=2)
    with pytest.raises(CancelledByTest):
        reranker.score("cat", PASSAGES, RaiseOnCall(n=3))
    embedder.calls.clear()
    reranker.score("cat", PASSAGES)
    assert embedder.documents_embedded() == PASSAGES[2:]


def test_a_fully_cached_request_needs_no_passage_checkpoint() -> None:
    reranker = LateInteractionReranker(HashingEmbedder(16))
    reranker.score("cat", PASSAGES)
    checkpoint = RaiseOnCall(n=2)
    reranker.score("cat", PASSAGES, checkpoint)
    assert checkpoint.calls == 1


def test_a_raising_checkpoint_stops_the_cross_encoder_after_the_first_batch(
    tiny_directory: Path,
) -> None:
    reranker = CrossEncoderReranker.from_onnx_directory(tiny_directory, threads=1, batch_size=3)
    scorer = CountingScorer(reranker.scorer)
    counted = CrossEncoderReranker(scorer, batch_size=3)
    with pytest.raises(CancelledByTest):
        counted.score("cat", PASSAGES, RaiseOnCall(n=2))
    assert scorer.batches == [PASSAGES[:3]], "one batch, of the shortest passages"


def test_the_cross_encoder_calls_the_checkpoint_before_each_batch(tiny_directory: Path) -> None:
    reranker = CrossEncoderReranker.from_onnx_directory(tiny_directory, threads=1, batch_size=2)
    checkpoint = RaiseOnCall(n=10**9)
    reranker.score("cat", PASSAGES, checkpoint)
    assert checkpoint.calls == 4
