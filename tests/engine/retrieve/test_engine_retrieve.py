"""retrieve on the engine (§7.7, §8) through the RCP surface, with a deterministic embedder."""

from __future__ import annotations

import base64
import struct

import pytest
from engine_support import Calls, ids, indexed

from rcpkit.engine.engine import Engine
from rcpkit.engine.filters import operators_for
from rcpkit.handlers.engine import build_engine_app

CORPUS = [
    {
        "id": "fox",
        "text": "The quick brown fox jumps over the lazy dog.",
        "title": "Fox",
        "meta": {"lang": "en", "year": 2020, "tag": ["animal", "classic"]},
    },
    {
        "id": "fuchs",
        "text": "Der schnelle braune Fuchs springt über den faulen Hund. The fox again.",
        "meta": {"lang": "de", "year": 2023, "tag": ["animal"]},
    },
    {
        "id": "cars",
        "text": "Electric cars charge from the grid; a fox is not a car.",
        "meta": {"lang": "en", "year": 2024, "tag": ["tech"], "date": "2024-05-01T00:00:00Z"},
    },
    {
        "id": "tides",
        "text": "Tides are driven by the gravity of the moon and the sun.",
        "meta": {"lang": "en", "year": 2019, "date": 1262304000000},
    },
]


@pytest.fixture
async def call(engine: Engine):  # type: ignore[no-untyped-def]
    async with indexed(engine, CORPUS) as calls:
        yield calls


@pytest.mark.parametrize("mode", ["dense", "sparse", "hybrid"])
async def test_every_mode_finds_the_matching_chunk(call: Calls, mode: str) -> None:
    result = await call.result("retrieve", {"query": "moon gravity tides", "k": 2, "mode": mode})
    assert ids(result)[0] == "tides#0"
    assert len(result["hits"]) <= 2
    assert set(result["hits"][0]["scores"]) >= ({"dense", "sparse"} & {mode} or {"fused"})


async def test_a_filter_excludes_the_best_hit(call: Calls) -> None:
    query = {"query": "quick brown fox", "k": 5, "mode": "hybrid"}
    best = ids(await call.result("retrieve", query))[0]
    assert best == "fox#0"
    filtered = await call.result(
        "retrieve", {**query, "filter": {"field": "lang", "op": "eq", "value": "de"}}
    )
    assert ids(filtered) == ["fuchs#0"]


async def test_filters_combine_and_compare_dates_in_both_encodings(call: Calls) -> None:
    tree = {
        "and": [
            {"field": "lang", "op": "eq", "value": "en"},
            {
                "or": [
                    {"field": "year", "op": "gte", "value": 2024},
                    {"field": "date", "op": "lt", "value": "2011-01-01T00:00:00Z"},
                ]
            },
        ]
    }
    result = await call.result("retrieve", {"query": "fox moon cars", "k": 10, "filter": tree})
    assert sorted(ids(result)) == ["cars#0", "tides#0"]


async def test_array_fields_support_contains_and_in(call: Calls) -> None:
    contains = {"field": "tag", "op": "contains", "value": "classic"}
    result = await call.result("retrieve", {"query": "fox", "k": 10, "filter": contains})
    assert ids(result) == ["fox#0"]


_SAMPLES = {"keyword": "en", "text": "fox", "int": 2020, "float": 0.5, "bool": True}
_SAMPLES["date"] = "2024-05-01T00:00:00Z"


def _value(op: str, field_type: str) -> object:
    sample = _SAMPLES[field_type]
    return [sample] if op in ("in", "nin") else True if op == "exists" else sample


async def test_every_advertised_field_accepts_exactly_its_section_8_operators(
    call: Calls, engine: Engine
) -> None:
    # What the capability advertises, what the parser accepts and what the store
    # compiles and runs must agree for every advertised field and operator.
    advertised = build_engine_app(engine).server.capabilities.to_wire()["filter"]
    assert {"path", "folders"} <= set(advertised["fields"])
    for field, field_type in advertised["fields"].items():
        allowed = operators_for(field_type, field in engine.config.array_fields)
        for op in advertised["operators"]:
            clause = {"field": field, "op": op, "value": _value(op, field_type)}
            reply = await call("retrieve", {"query": "fox", "k": 3, "filter": clause})
            if op in allowed:
                assert "result" in reply, (clause, reply)
            else:
                assert reply["error"]["code"] == -32602, (clause, reply)
                assert reply["error"]["data"]["field"] == "filter.op"


async def test_contains_on_a_scalar_keyword_field_is_refused_not_an_empty_result(
    call: Calls,
) -> None:
    contains = {"field": "lang", "op": "contains", "value": "en"}
    error = await call.error("retrieve", {"query": "fox", "k": 10, "filter": contains})
    assert error["code"] == -32602
    assert error["data"]["field"] == "filter.op"


async def test_an_unadvertised_filter_field_is_invalid_params(call: Calls) -> None:
    error = await call.error(
        "retrieve", {"query": "fox", "filter": {"field": "secret", "op": "eq", "value": 1}}
    )
    assert error["code"] == -32602
    assert "filter" in error["data"]["field"]


async def test_an_empty_combinator_is_invalid_params(call: Calls) -> None:
    error = await call.error("retrieve", {"query": "fox", "filter": {"and": []}})
    assert error["code"] == -32602


async def test_convex_and_rrf_can_order_the_same_candidates_differently(call: Calls) -> None:
    base = {"query": "fox car grid", "k": 4, "mode": "hybrid", "candidateK": 4}
    orders = set()
    for fusion in (
        {"method": "rrf"},
        {"method": "convex", "alpha": 0.05},
        {"method": "convex", "alpha": 0.95},
        {"method": "weighted"},
    ):
        orders.add(tuple(ids(await call.result("retrieve", {**base, "fusion": fusion}))))
    assert len(orders) > 1


async def test_min_score_applies_to_the_final_score(call: Calls) -> None:
    everything = await call.result("retrieve", {"query": "fox", "k": 10, "mode": "sparse"})
    cut = everything["hits"][0]["score"]
    kept = await call.result(
        "retrieve", {"query": "fox", "k": 10, "mode": "sparse", "minScore": cut}
    )
    assert [hit["score"] >= cut for hit in kept["hits"]] == [True] * len(kept["hits"])
    assert len(kept["hits"]) < len(everything["hits"])


async def test_citations_point_at_the_exact_source_span(call: Calls, engine: Engine) -> None:
    result = await call.result("retrieve", {"query": "electric cars", "k": 1})
    hit = result["hits"][0]
    citation = hit["citation"]
    assert hit["chunk"]["docId"] == "cars"
    assert CORPUS[2]["text"][citation["start"] : citation["end"]] == hit["text"]
    assert hit["trust"]["level"] == "untrusted"
    assert result["indexVersion"] == str(engine.store.version)


async def test_include_text_false_omits_bodies(call: Calls) -> None:
    result = await call.result("retrieve", {"query": "fox", "includeText": False})
    assert all("text" not in hit for hit in result["hits"])


async def test_include_vectors_in_json_and_f32_base64_agree(call: Calls) -> None:
    plain = await call.result("retrieve", {"query": "tides", "k": 1, "includeVectors": True})
    packed = await call.result(
        "retrieve", {"query": "tides", "k": 1, "includeVectors": True, "encoding": "f32-base64"}
    )
    vector = plain["hits"][0]["vector"]
    raw = base64.b64decode(packed["hits"][0]["vector"])
    assert len(raw) == 4 * len(vector)
    assert list(struct.unpack(f"<{len(vector)}f", raw)) == pytest.approx(vector)


async def test_document_unit_returns_each_document_once(call: Calls) -> None:
    result = await call.result("retrieve", {"query": "fox", "k": 10, "unit": "document"})
    assert sorted(ids(result)) == sorted(set(ids(result)))
    assert all(hit["unit"] == "document" for hit in result["hits"])
    assert "fox" in ids(result)


async def test_k_above_max_k_is_clamped_and_noted(call: Calls) -> None:
    result = await call.result("retrieve", {"query": "fox", "k": 10**9})
    assert "k clamped to maxK 200" in result["usage"]["notes"]


async def test_an_empty_query_is_invalid_params(call: Calls) -> None:
    error = await call.error("retrieve", {"query": "   "})
    assert (error["code"], error["data"]["field"]) == (-32602, "query")


async def test_a_huge_query_is_answered_with_a_note(call: Calls) -> None:
    result = await call.result("retrieve", {"query": "fox tides " * 5000, "mode": "hybrid"})
    assert result["hits"]
    assert any("first" in note for note in result["usage"]["notes"])


async def test_text_content_blocks_are_accepted_as_queries(call: Calls) -> None:
    result = await call.result("retrieve", {"query": [{"type": "text", "text": "moon tides"}]})
    assert ids(result)[0] == "tides#0"


async def test_embed_accepts_inputs_and_texts_and_binary_encoding(call: Calls) -> None:
    plain = await call.result("embed", {"inputs": ["fox"], "kind": "query"})
    legacy = await call.result("embed", {"texts": ["fox"], "kind": "query"})
    packed = await call.result(
        "embed", {"inputs": ["fox"], "kind": "query", "encoding": "f32-base64"}
    )
    assert plain == legacy
    assert packed["encoding"] == "f32-base64"
    assert packed["dimension"] == len(plain["vectors"][0])
    raw = base64.b64decode(packed["vectors"][0])
    assert list(struct.unpack(f"<{packed['dimension']}f", raw)) == pytest.approx(
        plain["vectors"][0], abs=1e-6
    )
