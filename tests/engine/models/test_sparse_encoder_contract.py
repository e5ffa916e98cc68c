"""Cases every SparseEncoder must pass: the hashing test double and splade-tiny alike."""

from __future__ import annotations

import numpy as np
import pytest
from models_support import SPARSE_ENCODERS

from rcpkit.engine.models import SparseEncoder


@pytest.fixture(params=sorted(SPARSE_ENCODERS))
def sparse_encoder(request: pytest.FixtureRequest) -> SparseEncoder:
    return SPARSE_ENCODERS[request.param]()


TEXTS = ["what is the capital of france", "", "Paris is the capital and largest city of France."]


def test_encode_returns_one_sparse_vector_per_text_with_ascending_unique_indices(
    sparse_encoder: SparseEncoder,
) -> None:
    vectors = sparse_encoder.encode(TEXTS)
    assert len(vectors) == len(TEXTS)
    for vector in vectors:
        assert vector.indices.dtype == np.int64
        assert vector.values.dtype == np.float32
        assert vector.indices.shape == vector.values.shape
        assert np.all(np.diff(vector.indices) > 0)
        assert np.all((vector.indices >= 0) & (vector.indices < sparse_encoder.vocabulary_size))


def test_sparse_weights_are_positive(sparse_encoder: SparseEncoder) -> None:
    for vector in sparse_encoder.encode(TEXTS):
        assert np.all(vector.values > 0)


def test_a_non_empty_text_has_some_weight(sparse_encoder: SparseEncoder) -> None:
    first, _, third = sparse_encoder.encode(TEXTS)
    assert first.indices.size > 0
    assert third.indices.size > 0


def test_sparse_encoding_is_deterministic_and_batch_equals_single(
    sparse_encoder: SparseEncoder,
) -> None:

    batch = sparse_encoder.encode(TEXTS)
    for text, vector in zip(TEXTS, batch, strict=True):
        (single,) = sparse_encoder.encode([text])
        np.testing.assert_array_equal(single.indices, vector.indices)
        np.testing.assert_allclose(single.values, vector.values, atol=1e-5)


def test_sparse_encoding_of_no_texts_is_empty(sparse_encoder: SparseEncoder) -> None:
    assert sparse_encoder.encode([]) == []


def test_sparse_encoders_reject_an_unknown_kind(sparse_encoder: SparseEncoder) -> None:
    with pytest.raises(ValueError, match="kind"):
        sparse_encoder.encode(TEXTS, "passage")  # type: ignore[arg-type]
    assert sparse_encoder.identity
