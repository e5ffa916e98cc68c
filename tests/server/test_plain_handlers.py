"""``retrieve`` handlers in plain Python: fields by name in, tuples or dicts out."""

from __future__ import annotations

from typing import Any, Literal

import pytest

from rcpkit import App, RequestContext, matches
from rcpkit.protocol import messages as m
from support import running


async def test_a_plain_handler_gets_fields_by_name_and_its_own_defaults() -> None:
    app = App("p", "1")
    calls: list[dict[str, Any]] = []

    @app.retrieve(max_k=4)
    def search(query: str, k: int = 2, mode: Literal["sparse", "dense"] = "sparse") -> Any:
        calls.append({"query": query, "k": k, "mode": mode})
        return [(f"d{i}", 1.0 / (i + 1), f"text {i}") for i in range(10)]

    async with running(app) as peer:
        defaulted = await peer.request(1, "retrieve", {"query": [{"type": "text", "text": "hi"}]})
        chosen = await peer.request(2, "retrieve", {"query": "hi", "k": 3, "mode": "dense"})
        clamped = await peer.request(3, "retrieve", {"query": "hi", "k": 9})
    assert calls[:2] == [
        {"query": "hi", "k": 2, "mode": "sparse"},
        {"query": "hi", "k": 3, "mode": "dense"},
    ]
    assert [hit["id"] for hit in defaulted["result"]["hits"]] == ["d0", "d1"]
    assert defaulted["result"]["hits"][0] == {"id": "d0", "score": 1.0, "text": "text 0"}
    assert len(chosen["result"]["hits"]) == 3
    assert len(clamped["result"]["hits"]) == 4  # never more than k (§7.7), clamped to maxK
    assert clamped["result"]["usage"]["notes"] == ["k clamped to maxK 4"]


def test_the_signature_is_capability_metadata() -> None:
    app = App("p", "1")

    @app.retrieve(max_k=7, filter={"tag": "keyword"})
    def search(
        query: str,
        mode: Literal["dense", "hybrid"] | None = "hybrid",
        token_budget: int | None = None,
        cursor: str | None = None,
        filter: Any = None,
    ) -> list[Any]:
        return []

    wire = app.server.capabilities.to_wire()
    assert wire["retrieve"] == {
        "maxK": 7,
        "modes": ["dense", "hybrid"],
        "defaultMode": "hybrid",
        "tokenBudget": True,
    }
    assert wire["pagination"] == {}
    assert wire["filter"] == {"fields": {"tag": "keyword"}}


def test_explicit_metadata_wins_over_the_signature() -> None:
    app = App("p", "1")
    app.retrieve(modes=["sparse"])(lambda query, mode="dense": [])
    assert app.server.capabilities.to_wire()["retrieve"] == {"modes": ["sparse"]}


def test_a_parameter_that_is_no_retrieve_field_is_refused_at_registration() -> None:
    app = App("p", "1")
    with pytest.raises(TypeError, match="`top`"):
        app.retrieve()(lambda query, top=3: [])


async def test_dicts_hits_and_async_handlers_with_the_context_and_a_filter() -> None:
    app = App("p", "1")
    docs = [{"id": "a", "tag": "news"}, {"id": "b", "tag": "blog"}]

    @app.retrieve(filter={"tag": "keyword"})
    async def search(query: str, ctx: RequestContext, filter: Any = None) -> Any:
        ctx.notes.append("plain")
        kept = [doc for doc in docs if matches(filter, doc)]
        return [
            {"id": kept[0]["id"], "score": 2.0},
            *(m.Hit(id=d["id"], score=1.0) for d in kept[1:]),
        ]

    async with running(app) as peer:
        both = await peer.request(1, "retrieve", {"query": "q"})
        news = await peer.request(
            2, "retrieve", {"query": "q", "filter": {"field": "tag", "op": "eq", "value": "news"}}
        )
    assert [hit["id"] for hit in both["result"]["hits"]] == ["a", "b"]
    assert both["result"]["usage"]["notes"] == ["plain"]
    assert [hit["id"] for hit in news["result"]["hits"]] == ["a"]


async def test_a_handler_returning_something_else_is_an_internal_error() -> None:
    app = App("p", "1")
    app.retrieve()(lambda query: "not hits")
    async with running(app) as peer:
        reply = await peer.request(1, "retrieve", {"query": "q"})
    assert reply["error"]["code"] == -32603


async def test_typed_tier_retrieve_and_graph_handlers_may_return_plain_lists() -> None:
    app = App("p", "1")
    app.retrieve()(lambda params: [("x", 0.5, "text"), ("y", 0.25)])

    @app.graph(ops=["local"])
    async def graph(params: m.GraphParams, ctx: RequestContext) -> Any:
        return [{"id": "node-hit", "score": 1.0}]

    async with running(app) as peer:
        retrieved = await peer.request(1, "retrieve", {"query": "q", "k": 1})
        graphed = await peer.request(2, "graph", {"op": "local", "query": "q"})
    assert retrieved["result"]["hits"] == [{"id": "x", "score": 0.5, "text": "text"}]
    assert graphed["result"] == {"hits": [{"id": "node-hit", "score": 1.0}]}
