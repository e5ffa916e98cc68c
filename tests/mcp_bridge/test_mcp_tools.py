"""Which MCP tools an engine's advertised capabilities justify, and their schemas."""

from __future__ import annotations

import pytest

pytest.importorskip("mcp")

from rcpkit.mcp_bridge import tools_for
from rcpkit.mcp_bridge.schemas import filter_schema


def test_graph_is_offered_only_with_its_advertised_ops() -> None:
    assert "graph" not in tools_for({"retrieve": {}})
    assert "graph" not in tools_for({"retrieve": {}, "graph": {"ops": []}})
    tools = tools_for({"retrieve": {}, "graph": {"ops": ["local", "global"]}})
    assert tools["graph"].tool.input_schema["properties"]["op"]["enum"] == ["local", "global"]


def test_index_tools_need_a_writable_index() -> None:
    assert set(tools_for({"retrieve": {}, "index": {"writable": False}})) == {"retrieve"}
    writable = tools_for({"index": {"writable": True}})
    assert set(writable) == {"index_add", "index_delete"}
    assert writable["index_delete"].tool.annotations.destructive_hint is True


def test_retrieve_arguments_follow_the_retrieve_capability() -> None:
    bare = tools_for({"retrieve": {}})["retrieve"].tool.input_schema["properties"]
    assert set(bare) == {"query", "k"}
    rich = tools_for(
        {
            "retrieve": {
                "maxK": 50,
                "modes": ["sparse"],
                "defaultMode": "sparse",
                "tokenBudget": True,
            },
            "pagination": {},
        }
    )["retrieve"].tool.input_schema["properties"]
    assert rich["k"]["maximum"] == 50
    assert rich["mode"] == {"enum": ["sparse"], "default": "sparse"}
    assert {"tokenBudget", "cursor"} <= set(rich)


def test_the_filter_schema_offers_only_advertised_operators_that_apply() -> None:
    schema = filter_schema(
        {"fields": {"year": "int", "where": "geo", "tag": "keyword"}, "operators": ["eq", "gt"]}
    )
    assert schema is not None
    clauses = {
        c["properties"]["field"]["const"]: c["properties"]["op"]["enum"]
        for c in schema["$defs"]["node"]["anyOf"]
        if "field" in c.get("properties", {})
    }
    assert clauses == {"year": ["eq", "gt"], "tag": ["eq"]}  # geo: nothing applies


def test_untyped_filter_fields_allow_every_advertised_operator() -> None:
    schema = filter_schema({"fields": ["lang"]})
    assert schema is not None
    (clause,) = [c for c in schema["$defs"]["node"]["anyOf"] if "field" in c["properties"]]
    assert len(clause["properties"]["op"]["enum"]) == 10
    assert filter_schema({"fields": {}}) is None


def test_the_bridge_package_exports_exactly_its_surface() -> None:
    import rcpkit.mcp_bridge as bridge

    assert set(bridge.__all__) == {
        "Backend",
        "Bridge",
        "ClientBackend",
        "FederationBackend",
        "Source",
        "ToolSpec",
        "open_backend",
        "serve_http",
        "serve_stdio",
        "tools_for",
    }
    assert all(hasattr(bridge, name) for name in bridge.__all__)
