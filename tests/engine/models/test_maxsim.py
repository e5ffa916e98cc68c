"""§7.5 MaxSim: Σ over query tokens of the best similarity to any document token."""

from __future__ import annotations

import numpy as np
import pytest

from rcpkit.engine.models import l2_normalize, maxsim, maxsim_many


def _tokens(seed: int, count: int, dimension: int = 8) -> np.ndarray:
    return l2_normalize(np.random.default_rng(seed).standard_normal((count, dimension)))


def test_maxsim_sums_each_query_tokens_best_match() -> None:
    query = np.array([[1.0, 0.0], [0.0, 1.0]], np.float32)
    document = np.array([[1.0, 0.0], [0.6, 0.8]], np.float32)
    assert maxsim(query, document) == pytest.approx(1.0 + 0.8)


def test_an_empty_query_or_document_scores_zero() -> None:
    empty = np.zeros((0, 8), np.float32)
    assert maxsim(empty, _tokens(1, 3)) == 0.0
    assert maxsim(_tokens(1, 3), empty) == 0.0


def test_the_batch_scorer_agrees_with_scoring_each_document_alone() -> None:
    query = _tokens(0, 5)
    documents = [_tokens(1, 7), np.zeros((0, 8), np.float32), _tokens(2, 1), _tokens(3, 30)]
    expected = [maxsim(query, document) for document in documents]
    np.testing.assert_allclose(maxsim_many(query, documents), expected, rtol=1e-6)
    assert maxsim_many(query, []).shape == (0,)


def test_mismatched_token_dimensions_are_rejected() -> None:
    with pytest.raises(ValueError, match="dimensions"):
        maxsim(_tokens(0, 2, 8), _tokens(1, 2, 4))
