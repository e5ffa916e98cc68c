"""The graph method (§7.9) on the engine, with the regex extractor over a known corpus."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from engine_support import Calls, make_engine, serving

POLAR = [
    ("polar-1", "Roald Amundsen led the expedition to the South Pole aboard the Fram. "
                "Olav Bjaaland skied beside Roald Amundsen."),
    ("polar-2", "Olav Bjaaland grew up in Morgedal. He made the expedition skis himself."),
    ("polar-3", "Morgedal lies in Telemark, where Sondre Norheim shaped modern skiing."),
    ("polar-4", "Helmer Hanssen and Roald Amundsen reached the South Pole with the dogs."),
]  # fmt: skip
LAB = [
    ("lab-1", "Marie Curie isolated Radium in the Paris laboratory. "
              "Pierre Curie measured the Radium samples."),
    ("lab-2", "Pierre Curie built the Electrometer used in the Paris laboratory."),
    ("lab-3", "Marie Curie and Pierre Curie shared the Nobel Prize with Henri Becquerel."),
]  # fmt: skip


@pytest.fixture
async def call(tmp_path: Path):  # type: ignore[no-untyped-def]
    engine = make_engine(tmp_path / "g", graph="regex")
    async with serving(engine) as peer:
        calls = Calls(peer)
        documents = [{"id": i, "text": t} for i, t in POLAR + LAB]
        await calls.result("index/add", {"documents": documents, "chunk": False})
        yield calls
    engine.close()


def docs(hits: list[dict[str, Any]]) -> list[str]:
    return [hit["chunk"]["docId"] for hit in hits if "chunk" in hit]


async def test_local_search_reaches_the_chunk_two_hops_away_with_its_path(call: Calls) -> None:
    result = await call.result(
        "graph", {"op": "local", "query": "Roald Amundsen", "k": 6, "hops": 3}
    )
    assert "polar-3" in docs(result["hits"])  # via Olav Bjaaland → Morgedal
    assert all(hit["provenance"]["nodes"] for hit in result["hits"])
    paths = await call.result(
        "graph", {"op": "local", "query": "Roald Amundsen", "k": 5, "hops": 3, "unit": "path"}
    )
    assert any(len(hit["provenance"]["path"]) >= 3 for hit in paths["hits"])


async def test_global_search_returns_the_right_community(call: Calls) -> None:
    result = await call.result("graph", {"op": "global", "query": "Curie radium laboratory"})
    assert result["summary"]
    top = result["communities"][0]
    assert "curie" in (top["title"] + top["summary"]).lower()


async def test_drift_followups_are_new_across_a_session(call: Calls) -> None:
    first = await call.result(
        "graph", {"op": "drift", "query": "South Pole expedition", "sessionId": "d"}
    )
    second = await call.result(
        "graph", {"op": "drift", "query": "South Pole expedition", "sessionId": "d"}
    )
    assert first["followups"]
    assert not set(first["followups"]) & set(second.get("followups", []))


async def test_communities_paginate_and_neighbors_respect_hops(call: Calls) -> None:
    page = await call.result("graph", {"op": "communities", "k": 1})
    seen = [c["id"] for c in page["communities"]]
    while page.get("nextCursor"):
        page = await call.result(
            "graph", {"op": "communities", "k": 1, "cursor": page["nextCursor"]}
        )
        seen += [c["id"] for c in page["communities"]]
    assert len(seen) == len(set(seen)) >= 2
    near = await call.result("graph", {"op": "neighbors", "seedIds": ["morgedal"], "hops": 1})
    far = await call.result("graph", {"op": "neighbors", "seedIds": ["morgedal"], "hops": 2})
    assert len(far["nodes"]) > len(near["nodes"])
    missing = await call.error("graph", {"op": "neighbors"})
    assert missing["data"]["field"] == "seedIds"


async def test_deleting_a_document_removes_its_entities_mentions(call: Calls) -> None:
    await call.result("index/delete", {"ids": ["polar-3"]})
    result = await call.result("graph", {"op": "local", "query": "Sondre Norheim Telemark"})
    assert "polar-3" not in docs(result["hits"])


async def test_without_a_graph_the_method_is_capability_missing(engine) -> None:  # type: ignore[no-untyped-def]
    async with serving(engine) as peer:
        error = await Calls(peer).error("graph", {"op": "local", "query": "x"})
    assert error["code"] == -32003


async def test_retrieve_with_a_graph_unit_routes_through_the_graph(call: Calls) -> None:
    nodes = await call.result("retrieve", {"query": "Marie Curie", "k": 3, "unit": "node"})
    assert nodes["hits"]
    assert all(hit["unit"] == "node" for hit in nodes["hits"])
    communities = await call.result(
        "retrieve", {"query": "Radium laboratory", "k": 2, "unit": "community"}
    )
    assert communities["hits"][0]["unit"] == "community"
    assert "level" in communities["hits"][0]
