"""The gateway server over in-process engines, spoken to by the rcpkit client in memory."""

from __future__ import annotations

import pytest
from gateway_support import Engine, connector, registry

from rcpkit.client import Client, connect_in_memory
from rcpkit.federation import Federation
from rcpkit.gateway import build_gateway
from rcpkit.protocol import RCPError

DOCS_A = {"a1": "rank fusion merges lists", "a2": "dense vectors"}
DOCS_B = {"b1": "fusion of rank lists", "b2": "sparse lexical rank"}


async def _gateway(engines: dict[str, Engine], **options) -> tuple[Client, Federation]:
    specs = [{"id": name} for name in engines]
    federation = Federation(registry(specs), identity="gw-test", connector=connector(engines))
    await federation.connect()
    server = build_gateway(federation, **options)
    return await connect_in_memory(server), federation


async def test_the_gateway_advertises_catalog_plus_the_union_of_its_engines() -> None:
    engines = {
        "a": Engine("A", DOCS_A, modes=["dense"], filter_fields={"lang": "keyword"}),
        "b": Engine("B", DOCS_B, modes=["sparse"]),
    }
    client, federation = await _gateway(engines)
    caps = client.raw_capabilities
    assert caps["catalog"] == {"engines": 2}
    assert caps["retrieve"]["modes"] == ["dense", "sparse"]
    assert caps["retrieve"]["fusion"] == ["rrf", "weighted", "convex"]  # every floor is known
    assert caps["retrieve"]["scoreFloor"] == 0.0
    assert "streaming" in caps and "citations" in caps
    assert caps["filter"]["fields"] == {"lang": "keyword"}
    assert client.meta["federation"] == {"identity": "gw-test"}
    assert client.conformance == "L0"
    await client.close()
    await federation.close()


async def test_catalog_list_reports_each_engine_and_can_hide_endpoints() -> None:
    engines = {"a": Engine("A", DOCS_A), "b": Engine("B", DOCS_B)}
    client, federation = await _gateway(engines)
    listed = await client.catalog_list()
    assert [(entry.id, entry.server.name) for entry in listed.engines] == [("a", "A"), ("b", "B")]
    assert all("retrieve" in entry.capabilities for entry in listed.engines)
    assert listed.engines[0].endpoint == {"transport": "stdio", "command": ["unused"]}
    await client.close()
    hidden = await connect_in_memory(build_gateway(federation, hide_endpoints=True))
    assert all(entry.endpoint is None for entry in (await hidden.catalog_list()).engines)
    await hidden.close()
    await federation.close()


async def test_retrieve_through_the_gateway_is_fused_and_streams_federation_progress() -> None:
    client, federation = await _gateway({"a": Engine("A", DOCS_A), "b": Engine("B", DOCS_B)})
    async with client.stream_retrieve("rank fusion", k=3) as call:
        messages = [getattr(event, "message", "") async for event in call]
        result = await call.result()
    assert sorted(messages) == ["engine 'a' answered", "engine 'b' answered"]
    assert {hit.meta["engine"] for hit in result.hits} == {"a", "b"}
    await client.close()
    await federation.close()


async def test_the_gateway_forwards_its_own_hop_and_a_smaller_deadline() -> None:
    engines = {"a": Engine("A", DOCS_A)}
    client, federation = await _gateway(engines)
    raw = await client.call(
        "retrieve",
        {"query": "rank", "k": 1, "_meta": {"federation": {"depth": 3, "path": ["edge"]}}},
        gate=True,
    )
    assert raw["_meta"]["federation"]["answered"] == ["a"]
    meta = engines["a"].seen[0]["meta"]
    assert meta["federation"] == {"depth": 2, "path": ["edge", "gw-test"]}
    assert meta["deadlineMs"] < client.timeout * 1000  # the client sent deadlineMs; ours is less
    await client.close()
    await federation.close()


async def test_degraded_answers_list_failures_and_all_failing_is_backend_unavailable() -> None:
    broken = RCPError(-32603, "boom")
    engines = {"a": Engine("A", DOCS_A), "b": Engine("B", DOCS_B, error=broken)}
    client, federation = await _gateway(engines)
    raw = await client.call("retrieve", {"query": "rank", "k": 2})
    assert raw["_meta"]["degraded"] == [{"engine": "b", "code": -32603, "message": "boom"}]
    assert any("engine 'b' failed" in note for note in raw["usage"]["notes"])
    engines["a"].error = broken
    with pytest.raises(RCPError) as caught:  # never an empty success (§16.2)
        await client.retrieve("rank", k=2)
    assert caught.value.code == -32010
    await client.close()
    await federation.close()
