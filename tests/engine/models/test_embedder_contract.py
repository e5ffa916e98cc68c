"""Cases every Embedder must pass: the hashing test double and the real MiniLM alike."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from models_support import EMBEDDERS

from rcpkit.engine.models import Embedder, maxsim


@pytest.fixture(params=sorted(EMBEDDERS))
def embedder(request: pytest.FixtureRequest) -> Embedder:
    return EMBEDDERS[request.param]()


TEXTS = [
    "How do I reset a forgotten password?",
    "The Eiffel Tower was completed in 1889.",
    "",
    "Photosynthesis turns light into chemical energy, and plants store it as sugar.",
]


def test_embed_returns_one_float32_row_of_the_advertised_dimension_per_text(
    embedder: Embedder,
) -> None:
    vectors = embedder.embed(TEXTS)
    assert vectors.shape == (len(TEXTS), embedder.dimension)
    assert vectors.dtype == np.float32


def test_embed_of_no_texts_is_an_empty_matrix(embedder: Embedder) -> None:
    assert embedder.embed([]).shape == (0, embedder.dimension)
    assert embedder.embed_tokens([]) == []
    assert embedder.count_tokens([]) == []


def test_every_vector_has_unit_length_even_for_empty_text(embedder: Embedder) -> None:
    norms = np.linalg.norm(embedder.embed(TEXTS), axis=1)
    np.testing.assert_allclose(norms, 1.0, atol=1e-5)


def test_embedding_the_same_texts_twice_gives_the_same_vectors(embedder: Embedder) -> None:
    np.testing.assert_array_equal(embedder.embed(TEXTS), embedder.embed(TEXTS))


def test_a_batch_embeds_each_text_as_it_would_alone_and_keeps_input_order(
    embedder: Embedder,
) -> None:

    batch = embedder.embed(TEXTS)
    singles = np.stack([embedder.embed([text])[0] for text in TEXTS])
    np.testing.assert_allclose(batch, singles, atol=1e-5)


def test_a_symmetric_model_embeds_queries_and_documents_alike(embedder: Embedder) -> None:
    np.testing.assert_array_equal(embedder.embed(TEXTS, "query"), embedder.embed(TEXTS, "document"))


def test_an_unknown_kind_is_rejected(embedder: Embedder) -> None:
    with pytest.raises(ValueError, match="kind"):
        embedder.embed(TEXTS, "passage")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="kind"):
        embedder.embed_tokens(TEXTS, "passage")  # type: ignore[arg-type]


def test_identity_and_sizes_are_advertisable(embedder: Embedder) -> None:
    assert embedder.identity
    assert embedder.dimension > 0
    assert embedder.max_tokens > 0


def test_token_vectors_are_unit_rows_one_matrix_per_text(embedder: Embedder) -> None:
    matrices = embedder.embed_tokens(TEXTS)
    assert len(matrices) == len(TEXTS)
    for matrix in matrices:
        assert matrix.ndim == 2
        assert matrix.shape[1] == embedder.dimension
        assert matrix.dtype == np.float32
        np.testing.assert_allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-5)
    assert matrices[2].shape[0] == 0, "an empty text has no content tokens"


def test_token_vectors_of_a_batch_match_those_of_single_texts(embedder: Embedder) -> None:
    batch = embedder.embed_tokens(TEXTS)
    for text, matrix in zip(TEXTS, batch, strict=True):
        np.testing.assert_allclose(matrix, embedder.embed_tokens([text])[0], atol=1e-5)


def test_count_tokens_counts_words_of_plain_text(embedder: Embedder) -> None:
    assert embedder.count_tokens(["", "hello world", "hello world again"]) == [0, 2, 3]


def test_maxsim_over_token_vectors_ranks_the_relevant_passage_first(embedder: Embedder) -> None:
    query, relevant, irrelevant = embedder.embed_tokens(
        [
            "reset forgotten password",
            "To reset a forgotten password, open the login page and choose reset password.",
            "The Eiffel Tower was completed in 1889 for the World's Fair in Paris.",
        ]
    )
    assert maxsim(query, relevant) > maxsim(query, irrelevant)


def test_concurrent_calls_give_the_same_vectors_as_sequential_ones(embedder: Embedder) -> None:
    expected = embedder.embed(TEXTS)
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = [pool.submit(embedder.embed, TEXTS) for _ in range(8)]
        results = [future.result(timeout=30) for future in futures]
    for result in results:
        np.testing.assert_allclose(result, expected, atol=1e-6)
