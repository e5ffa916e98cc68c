"""The gateway forwards the whole protocol (issue 17 §3): single-engine methods and writes,
through ``python -m rcpkit gateway`` over real ``rcpkit serve`` engines."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gateway_support import GATEWAY, KEYWORD, build_index, write_registry
from observe_support import SPAWN, TREE

from rcpkit.client import Client
from rcpkit.protocol import RCPError


@pytest.fixture(scope="module")
def persistent(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    return build_index(tmp_path_factory.mktemp("notes"))


def _registry(tmp_path: Path, persistent: list[str], **notes: Any) -> Path:
    return write_registry(
        tmp_path / "rcp.json",
        [
            {"id": "samples", "transport": "stdio", "command": [*KEYWORD, "--sample"], **TREE},
            {"id": "notes", "transport": "stdio", "command": persistent, **TREE, **notes},
        ],
    )


async def test_embed_rerank_transform_feedback_and_memory_go_to_the_engine_that_has_them(
    tmp_path: Path, persistent: list[str]
) -> None:
    path = _registry(tmp_path, persistent)
    async with await Client.connect_stdio([*GATEWAY, str(path)], **SPAWN) as gateway:
        async with await Client.connect_stdio(persistent, **SPAWN) as notes:
            direct_embed = notes.raw_capabilities["embed"]
        capabilities = gateway.raw_capabilities
        for key in ("embed", "multiVector", "rerank", "transform", "feedback", "memory"):
            assert key in capabilities, key
        assert capabilities["embed"] == direct_embed  # the engine's own identity, dimension
        embedded = await gateway.call("embed", {"inputs": ["apples", "bananas"]})
        reranked = await gateway.call(
            "rerank", {"query": "fruit", "passages": ["orchards of apples", "rank fusion"]}
        )
        transformed = await gateway.call(
            "query/transform", {"query": "what is rrf", "method": "multi-query", "n": 2}
        )
        with pytest.raises(RCPError) as no_memory:  # the engine's own answer, forwarded
            await gateway.call("memory/recall", {"query": "fruit"})
    assert len(embedded["vectors"]) == 2
    assert len(embedded["vectors"][0]) == direct_embed["dimension"]
    assert sorted(reranked["order"]) == [0, 1]
    assert transformed["queries"]
    assert no_memory.value.code == -32015
    for result in (embedded, reranked, transformed):
        assert result["_meta"]["federation"]["engine"] == "notes"


async def test_a_plain_write_goes_to_the_first_writable_engine_and_meta_engine_overrides(
    tmp_path: Path, persistent: list[str]
) -> None:
    path = _registry(tmp_path, persistent)  # equal priorities: registry order decides
    document = {"documents": [{"id": "kiwi", "text": "Kiwis are fuzzy green fruit."}]}
    async with await Client.connect_stdio([*GATEWAY, str(path)], **SPAWN) as gateway:
        assert gateway.raw_capabilities["index"]["writable"] is True
        plain = await gateway.call("index/add", document)
        added = await gateway.call("index/add", {**document, "_meta": {"engine": "notes"}})
        found = await gateway.call("retrieve", {"query": "fuzzy green kiwis", "k": 8})
    assert plain["_meta"]["federation"]["engine"] == "samples"
    assert added["_meta"]["federation"]["engine"] == "notes"
    hits = {(hit["meta"]["engine"], hit["id"]) for hit in found["hits"]}
    assert ("samples", "kiwi") in hits, hits


async def test_the_registry_write_flag_picks_the_default_write_engine(
    tmp_path: Path, persistent: list[str]
) -> None:
    path = _registry(tmp_path, persistent, write=True)
    document = {"documents": [{"id": "lime.md", "text": "Limes are small sour citrus fruit."}]}
    async with await Client.connect_stdio([*GATEWAY, str(path)], **SPAWN) as gateway:
        added = await gateway.call("index/add", document)
        deleted = await gateway.call("index/delete", {"ids": added["ids"]})
        with pytest.raises(RCPError) as unknown:
            await gateway.call("embed", {"inputs": ["x"], "_meta": {"engine": "samples"}})
    assert added["_meta"]["federation"]["engine"] == "notes"
    assert deleted["_meta"]["federation"]["engine"] == "notes"
    assert unknown.value.code == -32602  # samples cannot embed


async def test_signed_cursors_page_the_fused_list_without_repeats_or_gaps(
    tmp_path: Path, persistent: list[str]
) -> None:
    path = _registry(tmp_path, persistent)
    query = {"query": "fusion rank fruit bm25 retrieval", "mode": "sparse"}
    async with await Client.connect_stdio([*GATEWAY, str(path)], **SPAWN) as gateway:
        assert "pagination" in gateway.raw_capabilities
        whole = await gateway.call("retrieve", {**query, "k": 6})
        first = await gateway.call("retrieve", {**query, "k": 3})
        second = await gateway.call("retrieve", {**query, "k": 3, "cursor": first["nextCursor"]})
        body, _, mac = first["nextCursor"].partition(".")
        forged = f"{body}.{'A' * len(mac)}"
        with pytest.raises(RCPError) as tampered:
            await gateway.call("retrieve", {**query, "k": 3, "cursor": forged})
        with pytest.raises(RCPError) as other:
            await gateway.call(
                "retrieve", {"query": "kiwis", "k": 3, "cursor": first["nextCursor"]}
            )

    def keys(result: dict[str, Any]) -> list[tuple[str, str]]:
        return [(hit["meta"]["engine"], hit["id"]) for hit in result["hits"]]

    assert len(keys(whole)) == 6
    assert keys(first) + keys(second) == keys(whole)
    assert (tampered.value.code, tampered.value.field) == (-32602, "cursor")
    assert "different query" in other.value.message


async def test_engines_are_discovered_through_another_aggregators_catalog(
    tmp_path: Path, persistent: list[str]
) -> None:
    inner = _registry(tmp_path, persistent)
    outer = write_registry(
        tmp_path / "outer.json",
        [
            {
                "id": "inner",
                "transport": "stdio",
                "command": [*GATEWAY, str(inner), "--name", "inner-gateway"],
                "discover": True,
                **TREE,
            }
        ],
    )
    async with await Client.connect_stdio([*GATEWAY, str(outer)], **SPAWN) as gateway:
        listed = await gateway.call("catalog/list", {})
        found = await gateway.call("retrieve", {"query": "rank fusion", "k": 4})
    assert {entry["id"] for entry in listed["engines"]} >= {"inner/samples", "inner/notes"}
    # Asked directly, not through the inner gateway as well (no hit twice).
    assert found["_meta"]["federation"]["answered"] == ["inner/samples", "inner/notes"]


async def test_discovery_through_a_registry_that_lists_its_own_gateway_terminates(
    tmp_path: Path,
) -> None:
    path = tmp_path / "rcp.json"
    write_registry(
        path,
        [
            {"id": "samples", "transport": "stdio", "command": [*KEYWORD, "--sample"], **TREE},
            {
                "id": "self",
                "transport": "stdio",
                "command": [*GATEWAY, str(path)],
                "discover": True,
                **TREE,
            },
        ],
    )
    async with await Client.connect_stdio([*GATEWAY, str(path)], **SPAWN) as gateway:
        raw = await gateway.call("retrieve", {"query": "bm25", "k": 2})
        listed = await gateway.call("catalog/list", {})
    assert raw["_meta"]["federation"]["answered"] == ["samples"]
    assert any("engine 'self' skipped: federation cycle" in note for note in raw["usage"]["notes"])
    assert {entry["id"] for entry in listed["engines"]} == {"samples", "self"}
