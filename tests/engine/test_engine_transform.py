"""query/transform (§7.8) and retrieve.rewrite (§7.7) on the engine."""

from __future__ import annotations

import pytest
from engine_support import Calls, ids, indexed

from rcpkit.engine.engine import Engine

DOCS = [
    {"id": "thermo", "text": "Thermocouples measure temperature from the voltage of two metals."},
    {"id": "baro", "text": "A barometer measures atmospheric pressure with a column of mercury."},
    {"id": "hygro", "text": "Hygrometers measure humidity, the water vapour content of air."},
    {"id": "anemo", "text": "An anemometer measures wind speed with rotating cups."},
]


@pytest.fixture
async def call(engine: Engine):  # type: ignore[no-untyped-def]
    async with indexed(engine, DOCS) as calls:
        yield calls


@pytest.mark.parametrize("method", ["rewrite", "multi-query", "decompose", "step-back", "hyde"])
async def test_every_method_returns_the_documented_shape(call: Calls, method: str) -> None:
    result = await call.result(
        "query/transform",
        {"query": "how does a barometr measure pressure in 2024", "method": method, "n": 3},
    )
    assert result["queries"]
    assert all(isinstance(query, str) and query for query in result["queries"])
    assert len(result["queries"]) <= 8
    if method == "hyde":
        assert result["hypothetical"]


async def test_rewrite_corrects_a_misspelling_against_the_corpus(call: Calls) -> None:
    result = await call.result("query/transform", {"query": "anemometr wind", "method": "rewrite"})
    assert result["queries"] == ["anemometer wind"]


async def test_retrieve_with_rewrite_reports_the_rewritten_query(call: Calls) -> None:
    plain = await call.result("retrieve", {"query": "hygrometrs", "k": 1, "mode": "sparse"})
    fixed = await call.result(
        "retrieve", {"query": "hygrometrs", "k": 1, "mode": "sparse", "rewrite": "rewrite"}
    )
    assert plain["hits"] == []
    assert ids(fixed) == ["hygro#0"]
    assert fixed["rewrittenQuery"] == "hygrometers"
    assert "transform" in fixed["usage"]["stages"]


async def test_decompose_retrieves_both_parts_of_a_two_part_question(call: Calls) -> None:
    question = "what measures wind speed and what measures humidity"
    fused = await call.result(
        "retrieve", {"query": question, "k": 2, "mode": "sparse", "rewrite": "decompose"}
    )
    assert set(ids(fused)) == {"anemo#0", "hygro#0"}


async def test_an_unadvertised_transform_method_is_option_unsupported(call: Calls) -> None:
    error = await call.error("query/transform", {"query": "x", "method": "translate"})
    assert error["code"] == -32602  # not a method of §7.8 at all: malformed
