"""Routing single-engine methods through a Federation (§16.1 Selector rules), in process."""

from __future__ import annotations

from typing import Any

import pytest
from federation_support import registry

from rcpkit.client import Client
from rcpkit.client.memory import connect_in_memory
from rcpkit.federation import Federation
from rcpkit.federation.registry import EngineSpec
from rcpkit.protocol import RCPError
from rcpkit.protocol import messages as m
from rcpkit.server import App


def _embedder(name: str, identity: str, *, down: bool = False) -> App:
    app = App(name, "1")

    @app.embed(dimension=2, identity=identity)
    def embed(params: m.EmbedParams) -> m.EmbedResult:
        if down:
            raise RCPError(-32010, f"{name}: model server unreachable", retryable=True)
        return m.EmbedResult(vectors=[[1.0, 0.0] for _ in params.items])

    return app


def _federation(apps: dict[str, App], specs: list[dict[str, Any]]) -> Federation:
    async def connect(spec: EngineSpec) -> Client:
        return await connect_in_memory(apps[spec.id].server)

    return Federation(registry(specs), identity="gw", connector=connect)


async def test_a_failing_embed_fails_over_only_to_an_engine_with_the_same_model() -> None:
    apps = {
        "primary": _embedder("primary", "model-a", down=True),
        "other-model": _embedder("other-model", "model-b"),
        "replica": _embedder("replica", "model-a"),
    }
    specs = [
        {"id": "primary", "priority": 3},
        {"id": "other-model", "priority": 2},
        {"id": "replica", "priority": 1},
    ]
    async with _federation(apps, specs) as federation:
        routed = await federation.call_one("embed", {"inputs": ["x"]})
    assert routed.engine == "replica"  # model-b would be another embedding space (§15.7)
    assert routed.tried == ("primary: primary: model server unreachable",)


async def test_when_every_engine_with_the_model_fails_the_call_is_backend_unavailable() -> None:
    apps = {"primary": _embedder("primary", "model-a", down=True)}
    async with _federation(apps, [{"id": "primary"}]) as federation:
        with pytest.raises(RCPError) as failed:
            await federation.call_one("embed", {"inputs": ["x"]})
    assert failed.value.code == -32010
    assert "no engine could take `embed`" in failed.value.message


async def test_a_caller_error_is_not_failed_over() -> None:
    apps = {"a": _embedder("a", "model-a"), "b": _embedder("b", "model-a")}
    async with _federation(apps, [{"id": "a"}, {"id": "b"}]) as federation:
        with pytest.raises(RCPError) as invalid:
            await federation.call_one("embed", {"inputs": "not a list"})
    assert invalid.value.code == -32602
