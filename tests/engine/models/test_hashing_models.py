"""The deterministic hashing test doubles: stable across processes and shaped like the real ones."""

from __future__ import annotations

import numpy as np
import pytest

from rcpkit.engine.models import HashingEmbedder, HashingSparseEncoder


def test_hashing_vectors_are_fixed_values_not_per_process_hashes() -> None:
    vector = HashingEmbedder(8).embed(["alpha beta"])[0]
    # blake2b buckets: the same on every machine and run, unlike Python's salted hash().
    np.testing.assert_array_equal(vector, HashingEmbedder(8).embed(["alpha beta"])[0])
    assert HashingEmbedder(8).identity == "rcpkit-hashing-v1:8"
    assert np.count_nonzero(vector) >= 1


def test_texts_sharing_words_are_closer_than_texts_sharing_none() -> None:
    embedder = HashingEmbedder(512)
    anchor, overlapping, disjoint = embedder.embed(
        ["reset the password", "password reset steps", "volcanic islands"]
    )
    assert anchor @ overlapping > anchor @ disjoint


def test_hashing_embedder_truncates_to_max_tokens_but_counts_every_word() -> None:
    embedder = HashingEmbedder(32, max_tokens=3)
    assert embedder.embed_tokens(["one two three four five"])[0].shape == (3, 32)
    assert embedder.count_tokens(["one two three four five"]) == [5]


def test_hashing_sparse_weights_grow_with_term_frequency() -> None:
    encoder = HashingSparseEncoder(1 << 12)
    (vector,) = encoder.encode(["echo echo echo delta"])
    weights = dict(zip(vector.indices.tolist(), vector.values.tolist(), strict=True))
    echo, delta = encoder.term_ids("echo delta")
    assert weights[echo] == pytest.approx(np.log1p(3))
    assert weights[delta] == pytest.approx(np.log1p(1))


def test_hashing_models_reject_degenerate_sizes() -> None:
    with pytest.raises(ValueError, match="dimension"):
        HashingEmbedder(1)
    with pytest.raises(ValueError, match="vocabulary_size"):
        HashingSparseEncoder(1)
