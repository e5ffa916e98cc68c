"""§8 in the runtime: a request's filter is judged before any handler runs."""

from __future__ import annotations

from typing import Any

import pytest

from rcpkit import App, RequestContext, matches
from rcpkit.protocol import messages as m
from rcpkit.protocol.filters import Clause
from support import running

DOCS = [
    {"id": "a", "meta": {"tag": ["news", "blog"], "year": 2024, "when": "2024-05-01T00:00:00Z"}},
    {"id": "b", "meta": {"tag": "paper", "year": 2019, "when": "2019-01-01T00:00:00Z"}},
]


def _app(seen: list[Any], **filter_capability: Any) -> App:
    app = App("f", "1")
    app.advertise("filter", **filter_capability)

    @app.retrieve()
    def retrieve(params: m.RetrieveParams, ctx: RequestContext) -> m.RetrieveResult:
        seen.append(ctx.filter)
        hits = [m.Hit(id=d["id"], score=1.0) for d in DOCS if matches(ctx.filter, d["meta"])]
        return m.RetrieveResult(hits=hits)

    return app


@pytest.mark.parametrize(
    ("tree", "code", "field"),
    [
        ({"field": "author", "op": "eq", "value": "x"}, -32602, "filter.field"),
        ({"field": "year", "op": "eq", "value": "2024"}, -32602, "filter.value"),
        ({"and": []}, -32602, "filter.and"),
        ({"field": "year", "op": "lt", "value": 2020}, -32005, None),
    ],
)
async def test_a_bad_filter_is_refused_before_the_handler_runs(
    tree: dict[str, Any], code: int, field: str | None
) -> None:
    seen: list[Any] = []
    app = _app(seen, fields={"tag": "keyword", "year": "int"}, operators=["eq", "in", "gte"])
    async with running(app) as peer:
        reply = await peer.request(1, "retrieve", {"query": "q", "filter": tree})
    assert reply["error"]["code"] == code, reply
    if field is not None:
        assert reply["error"]["data"]["field"] == field
    assert seen == []


async def test_the_handler_gets_the_validated_tree_and_matches_applies_it() -> None:
    seen: list[Any] = []
    app = _app(seen, fields={"tag": "keyword", "year": "int"})
    tree = {
        "and": [
            {"field": "tag", "op": "eq", "value": "news"},
            {"field": "year", "op": "gte", "value": 2020},
        ]
    }
    async with running(app) as peer:
        filtered = await peer.request(1, "retrieve", {"query": "q", "filter": tree})
        unfiltered = await peer.request(2, "retrieve", {"query": "q"})
    assert [hit["id"] for hit in filtered["result"]["hits"]] == ["a"]
    assert [hit["id"] for hit in unfiltered["result"]["hits"]] == ["a", "b"]
    assert seen[1] is None and seen[0] is not None


async def test_names_only_fields_are_typed_from_the_values() -> None:
    seen: list[Any] = []
    app = _app(seen, fields=["tag", "year"])
    async with running(app) as peer:
        reply = await peer.request(
            1, "retrieve", {"query": "q", "filter": {"field": "year", "op": "gte", "value": 2020}}
        )
        unknown = await peer.request(
            2, "retrieve", {"query": "q", "filter": {"field": "x", "op": "eq", "value": 1}}
        )
    assert [hit["id"] for hit in reply["result"]["hits"]] == ["a"]
    assert isinstance(seen[0], Clause) and seen[0].field_type == "float"
    assert unknown["error"]["code"] == -32602


def test_matches_takes_a_raw_filter_over_raw_metadata() -> None:
    meta = DOCS[0]["meta"]
    assert matches(None, meta)
    assert matches({"field": "tag", "op": "contains", "value": "blog"}, meta)
    assert not matches({"field": "tag", "op": "eq", "value": "paper"}, meta)
    assert matches({"field": "when", "op": "gte", "value": "2024-01-01T00:00:00Z"}, meta)
    assert not matches({"field": "when", "op": "lt", "value": 1_600_000_000_000}, meta)
    assert matches({"not": {"field": "missing", "op": "exists", "value": True}}, meta)
    assert not matches({"field": "year", "op": "in", "value": [2019, 2020]}, None)


async def test_contains_on_a_field_the_server_says_is_scalar_is_refused_before_the_handler() -> (
    None
):
    # §8 allows `contains` only on text and array fields; an advertisement cannot say
    # which fields hold arrays, so a server says it (Server.array_fields) and the runtime
    # checks it with the rest of the filter (issue 28: the filter is parsed once).
    seen: list[Any] = []
    app = _app(seen, fields={"tag": "keyword", "lang": "keyword"})
    app.server.array_fields(["tag"])
    async with running(app) as peer:
        member = {"field": "tag", "op": "contains", "value": "news"}
        ok = await peer.request(1, "retrieve", {"query": "q", "filter": member})
        scalar = {"field": "lang", "op": "contains", "value": "en"}
        refused = await peer.request(2, "retrieve", {"query": "q", "filter": scalar})
    assert [hit["id"] for hit in ok["result"]["hits"]] == ["a"]
    assert refused["error"]["code"] == -32602
    assert refused["error"]["data"]["field"] == "filter.op"
    assert len(seen) == 1


async def test_a_server_that_names_no_array_fields_gets_contains_on_every_field() -> None:
    seen: list[Any] = []
    app = _app(seen, fields={"tag": "keyword", "lang": "keyword"})
    async with running(app) as peer:
        scalar = {"field": "lang", "op": "contains", "value": "en"}
        reply = await peer.request(1, "retrieve", {"query": "q", "filter": scalar})
    assert "result" in reply, reply
    assert isinstance(seen[0], Clause) and seen[0].op == "contains"
