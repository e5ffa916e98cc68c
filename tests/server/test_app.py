from __future__ import annotations

import pytest

from rcpkit.protocol import messages as m
from rcpkit.protocol.capabilities import RetrieveCapability
from rcpkit.server.app import App
from rcpkit.server.lowlevel import Server
from support import running


def test_capabilities_are_derived_from_what_is_registered() -> None:
    app = App("d", "1")
    app.retrieve(max_k=10, modes=["dense"])(lambda p: None)
    app.index_delete()(lambda p: None)
    app.advertise("pagination")
    wire = app.server.capabilities.to_wire()
    assert wire == {
        "retrieve": {"maxK": 10, "modes": ["dense"]},
        "index": {"writable": False},
        "pagination": {},
    }


def test_a_method_needing_metadata_cannot_be_registered_without_it() -> None:
    server = Server("s", "1")
    server.handle("embed", lambda p: None)
    with pytest.raises(ValueError, match="metadata"):
        _ = server.capabilities


def test_lifecycle_methods_belong_to_the_runtime() -> None:
    with pytest.raises(ValueError, match="runtime"):
        Server("s", "1").handle("ping", lambda p: None)


def test_names_outside_rcp_are_refused() -> None:
    with pytest.raises(ValueError, match="not an RCP method"):
        Server("s", "1").handle("search", lambda p: None)
    with pytest.raises(AttributeError):
        _ = App("a", "1").search


def test_async_mode_is_for_coroutine_functions_only() -> None:
    with pytest.raises(TypeError):
        Server("s", "1").handle("retrieve", lambda p: None, mode="async")


async def test_the_low_level_server_takes_typed_capability_objects() -> None:
    server = Server("low", "2")

    async def retrieve(params: m.RetrieveParams) -> m.RetrieveResult:
        return m.RetrieveResult(hits=[m.Hit(id=1, score=0.5, text=str(params.query))])

    server.handle("retrieve", retrieve, capability=RetrieveCapability(max_k=3))
    app = App.__new__(App)
    app.server = server
    async with running(app) as peer:
        reply = await peer.request(1, "retrieve", {"query": "hello"})
    assert reply["result"] == {"hits": [{"id": 1, "score": 0.5, "text": "hello"}]}


async def test_inline_thread_and_async_handlers_all_answer() -> None:
    app = App("modes", "1")
    app.retrieve(mode="inline")(lambda p: {"hits": [{"id": "inline", "score": 1.0}]})
    app.rerank(methods=["colbert"])(lambda p: {"scores": [1.0]})

    async def embed(params: m.EmbedParams) -> m.EmbedResult:
        return m.EmbedResult(vectors=[[1.0, 0.0] for _ in params.items])

    app.embed(dimension=2, identity="toy")(embed)
    async with running(app) as peer:
        assert (await peer.request(1, "retrieve", {"query": "q"}))["result"]["hits"][0]["id"] == (
            "inline"
        )
        assert (await peer.request(2, "rerank", {"query": "q", "passages": ["p"]}))["result"] == {
            "scores": [1.0]
        }
        reply = await peer.request(3, "embed", {"texts": ["a", "b"]})
        assert reply["result"] == {"vectors": [[1.0, 0.0], [1.0, 0.0]]}
