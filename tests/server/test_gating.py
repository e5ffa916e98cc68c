from __future__ import annotations

from typing import Any

import pytest

from rcpkit.protocol import messages as m
from rcpkit.server.app import App
from server.apps import Probe, probe_app
from support import running


async def error_of(app: App, method: str, params: dict[str, Any]) -> dict[str, Any]:
    async with running(app) as peer:
        reply = await peer.request(1, method, params)
    assert "error" in reply, reply
    return reply["error"]


async def test_an_undefined_method_is_unknown_method() -> None:
    error = await error_of(probe_app(Probe()), "retrieve/v2", {})
    assert error["code"] == -32004


async def test_a_defined_but_unadvertised_method_is_capability_missing() -> None:
    error = await error_of(probe_app(Probe()), "graph", {"op": "local"})
    assert error["code"] == -32003


async def test_unknown_method_wins_over_capability_missing_for_vendor_methods() -> None:
    error = await error_of(probe_app(Probe()), "x-acme/thing", {})
    assert error["code"] == -32004


@pytest.mark.parametrize(
    ("params", "option"),
    [
        ({"mode": "hybrid"}, "mode"),
        ({"fusion": {"method": "convex"}}, "fusion"),
        ({"mmr": {"lambda": 0.5}}, "mmr"),
        ({"unit": "document"}, "unit"),
        ({"tokenBudget": 100}, "tokenBudget"),
        ({"filter": {"field": "a", "op": "eq", "value": 1}}, "filter"),
        ({"cursor": "c"}, "cursor"),
        ({"encoding": "f32-base64"}, "encoding"),
        ({"query": {"type": "image", "mimeType": "image/png", "data": "AA=="}}, "modality"),
        ({"rerank": {"method": "colbert"}}, "rerank"),
    ],
)
async def test_unadvertised_retrieve_options_are_option_unsupported(
    params: dict[str, Any], option: str
) -> None:
    error = await error_of(probe_app(Probe()), "retrieve", {"query": "q", **params})
    assert error["code"] == -32005
    assert error["data"]["option"] == option


async def test_strict_false_degrades_and_notes_what_it_ignored() -> None:
    async with running(probe_app(Probe())) as peer:
        reply = await peer.request(
            1, "retrieve", {"query": "q", "mode": "hybrid", "mmr": {"lambda": 1}, "strict": False}
        )
    notes = reply["result"]["usage"]["notes"]
    assert any("mode" in note for note in notes)
    assert any("mmr" in note for note in notes)


async def test_k_above_max_k_is_clamped_not_rejected() -> None:
    async with running(probe_app(Probe())) as peer:
        reply = await peer.request(1, "retrieve", {"query": "q", "k": 10**12})
    assert reply["result"]["usage"]["notes"] == ["k clamped to maxK 50"]


def _funnel_app() -> App:
    app = App("f", "1")
    app.method("retrieve", max_k=100, rerank_builtin=True)(lambda p: None)
    app.method("rerank", methods=["colbert"], max_candidates=30)(lambda p: None)
    return app


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"k": 10, "candidateK": 2}, "candidateK"),
        ({"k": 10, "rerank": {"method": "colbert", "topN": 5}}, "rerank.topN"),
        ({"k": 5, "candidateK": 8, "rerank": {"method": "colbert", "topN": 9}}, "candidateK"),
        ({"k": 10, "candidateK": 9, "rerank": False}, "candidateK"),
        # §3.3 is a MUST on the request: checked before clamping (k 500 > maxK 100).
        ({"k": 500, "candidateK": 200}, "candidateK"),
    ],
)
async def test_a_request_breaking_the_funnel_is_invalid_params_naming_the_knob(
    params: dict[str, Any], field: str
) -> None:
    error = await error_of(_funnel_app(), "retrieve", {"query": "q", **params})
    assert (error["code"], error["data"]["field"]) == (-32602, field)


def test_clamping_a_valid_funnel_lowers_the_wider_stage_never_exceeds_a_limit() -> None:
    from rcpkit.server.gating import check_options

    notes: list[str] = []
    params = m.RetrieveParams(
        query="q", k=50, candidate_k=600, rerank=m.RerankOption(method="colbert", top_n=500)
    )
    fixed = check_options("retrieve", params, _funnel_app().server.capabilities, notes)
    assert isinstance(fixed.rerank, m.RerankOption)
    assert (fixed.candidate_k, fixed.rerank.top_n, fixed.k) == (100, 30, 30)
    assert len(notes) == 3


async def test_a_funnel_that_holds_is_answered() -> None:
    async with running(probe_app(Probe())) as peer:
        reply = await peer.request(1, "retrieve", {"query": "q", "k": 5, "candidateK": 5})
    assert "result" in reply, reply


async def test_rerank_method_outside_the_advertised_set_is_option_unsupported() -> None:
    error = await error_of(
        probe_app(Probe()), "rerank", {"query": "q", "passages": ["a"], "method": "llm"}
    )
    assert (error["code"], error["data"]["option"]) == (-32005, "method")


async def test_rerank_max_candidates_is_enforced() -> None:
    error = await error_of(probe_app(Probe()), "rerank", {"query": "q", "passages": ["a"] * 21})
    assert (error["code"], error["data"]["field"]) == (-32602, "passages")


async def test_embed_batch_limit_is_enforced() -> None:
    app = App("e", "1")
    app.embed(dimension=2, identity="toy", batch_limit=2)(lambda p: {"vectors": []})
    error = await error_of(app, "embed", {"inputs": ["a", "b", "c"]})
    assert (error["code"], error["data"]["field"]) == (-32602, "inputs")


async def test_index_add_on_a_read_only_server_is_capability_missing() -> None:
    app = App("ro", "1", read_only=True)
    app.index_add()(lambda p: {"ids": []})
    app.index_delete()(lambda p: {"deleted": 0})
    async with running(app) as peer:
        info = (await peer.request(1, "info"))["result"]
        assert info["capabilities"]["index"] == {"writable": False}
        assert (await peer.request(2, "index/add", {"documents": []}))["error"]["code"] == -32003
        assert (await peer.request(3, "index/delete", {"ids": ["a"]}))["result"] == {"deleted": 0}


async def test_vendor_methods_are_served_when_their_capability_is_advertised() -> None:
    app = App("v", "1")
    app.method("x-acme/echo", capability={"version": 2})(lambda params: {"got": params})
    async with running(app) as peer:
        caps = (await peer.request(1, "info"))["result"]["capabilities"]
        assert caps["x-acme"] == {"version": 2}
        reply = await peer.request(2, "x-acme/echo", {"a": 1, "_meta": {"t": 1}})
    assert reply["result"] == {"got": {"a": 1}}
