"""The public surface of rcpkit.engine.transform is exactly the intended names."""

from __future__ import annotations

import typing

import rcpkit.engine.transform as transform_package
from rcpkit.engine.transform import (
    DESCRIPTIONS,
    TRANSFORM_METHODS,
    TRANSFORMS,
    Corpus,
    IndexedCorpus,
    VocabularyIndex,
)
from rcpkit.protocol.messages import TransformParams


def test_the_transform_package_exports_exactly_the_intended_names() -> None:
    assert set(transform_package.__all__) == {
        "DEFAULT_QUERIES",
        "DESCRIPTIONS",
        "MAX_QUERIES",
        "MERGES",
        "TRANSFORMS",
        "TRANSFORM_METHODS",
        "Corpus",
        "DenseNeighbours",
        "EmbedFunction",
        "IndexedCorpus",
        "Merge",
        "SearchFunction",
        "TransformContext",
        "TransformFunction",
        "TransformMethod",
        "TransformOptions",
        "Transformed",
        "VocabularyIndex",
        "merge_rankings",
        "method_named",
        "query_bound",
        "transform",
    }
    for name in transform_package.__all__:
        assert hasattr(transform_package, name), name


def test_every_protocol_method_has_a_transform_and_a_description() -> None:
    protocol_methods = set(typing.get_args(typing.get_type_hints(TransformParams)["method"]))
    assert set(TRANSFORM_METHODS) == protocol_methods
    assert set(TRANSFORMS) == protocol_methods
    assert set(DESCRIPTIONS) == protocol_methods
    assert all(len(text) > 40 for text in DESCRIPTIONS.values())


def test_the_hyde_description_says_it_is_feedback_based_not_generated() -> None:
    assert "not generated" in DESCRIPTIONS["hyde"]


def test_the_indexed_corpus_satisfies_the_corpus_protocol() -> None:
    corpus = IndexedCorpus(VocabularyIndex([("word", 1)]), 1, lambda query, k: [])
    assert isinstance(corpus, Corpus)
