"""The registry entry point: documented shapes, bounded fan-out, determinism."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from transform_support import TableEmbedder, memory_corpus

from rcpkit.engine.transform import (
    DEFAULT_QUERIES,
    MAX_QUERIES,
    TRANSFORM_METHODS,
    DenseNeighbours,
    Transformed,
    query_bound,
    transform,
)

PASSAGES = [
    "An automobile that keeps overheating usually has a failing radiator or a coolant leak.",
    "Check the radiator cap and the coolant level when the automobile runs hot.",
    "The boiling point of mercury is 356.7 degrees Celsius.",
    "The melting point of gallium is 29.8 degrees Celsius.",
]
CORPUS, _ = memory_corpus(PASSAGES)
MERGE_BY_METHOD = {
    "rewrite": "single",
    "hyde": "single",
    "multi-query": "rrf",
    "decompose": "interleave",
    "step-back": "rrf",
}
QUERY = "What is the boiling point of mercury and the melting point of gallium in 2023?"


@pytest.mark.parametrize("method", TRANSFORM_METHODS)
def test_every_method_returns_the_documented_shape(method: str) -> None:
    result = transform(method, QUERY, CORPUS, n=4)
    assert isinstance(result, Transformed)
    assert 1 <= len(result.queries) <= 4
    assert all(isinstance(query, str) and query for query in result.queries)
    assert result.rewritten
    assert (result.hypothetical is not None) == (method == "hyde")
    assert result.merge == (MERGE_BY_METHOD[method] if len(result.queries) > 1 else "single")


@pytest.mark.parametrize("method", TRANSFORM_METHODS)
def test_an_empty_query_gives_one_empty_query_and_no_error(method: str) -> None:
    result = transform(method, "   ", CORPUS)
    assert result.queries == [""]


def test_an_unknown_method_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="unknown transform method 'paraphrase'"):
        transform("paraphrase", QUERY, CORPUS)


def test_the_query_bound_defaults_per_method_and_never_exceeds_max_queries() -> None:
    assert query_bound("multi-query", None) == DEFAULT_QUERIES
    assert query_bound("decompose", None) == MAX_QUERIES
    assert query_bound("multi-query", 1000) == MAX_QUERIES
    assert query_bound("multi-query", 0) == 1


def test_the_same_input_gives_the_same_output() -> None:
    neighbours = DenseNeighbours(TableEmbedder({"car": ["automobile", "car"]}))
    for method in TRANSFORM_METHODS:
        first = transform(method, QUERY, CORPUS, 8, neighbours=neighbours)
        assert transform(method, QUERY, CORPUS, 8, neighbours=neighbours) == first


_PROGRAM = """
import json
from transform_support import memory_corpus
from rcpkit.engine.transform import TRANSFORM_METHODS, transform
import test_transform_registry as case
corpus, _ = memory_corpus(case.PASSAGES)
queries = [case.QUERY, "automobil overheating radiator", "Compare HNSW with IVF in 2021"]
results = [[transform(m, q, corpus, 8).queries for m in TRANSFORM_METHODS] for q in queries]
print(json.dumps(results))
"""


def test_the_output_does_not_depend_on_the_hash_seed() -> None:
    here = Path(__file__).parent
    outputs = []
    for seed in ("1", "2"):
        environment = {**os.environ, "PYTHONHASHSEED": seed}
        environment["PYTHONPATH"] = os.pathsep.join([str(here), environment.get("PYTHONPATH", "")])
        completed = subprocess.run(
            [sys.executable, "-c", _PROGRAM],
            capture_output=True,
            text=True,
            timeout=60,
            env=environment,
            check=True,
        )
        outputs.append(json.loads(completed.stdout))
    assert outputs[0] == outputs[1]
