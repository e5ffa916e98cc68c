"""Engine test helpers: an engine on a temporary index, served in memory through the real App."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from rcpkit.engine.config import load_config
from rcpkit.engine.engine import Engine
from rcpkit.engine.open import open_engine
from rcpkit.handlers.engine import build_engine_app
from rcpkit.transport.memory import MemoryPeer
from support import running


def make_engine(folder: Path, embedder: str = "hashing:64", **settings: Any) -> Engine:
    """An engine on a temporary index; RCPKIT_TEST_STORE=postgres puts it on a fresh PG database."""
    if os.environ.get("RCPKIT_TEST_STORE") == "postgres" and "store" not in settings:
        import pg_support

        settings["store"] = _databases.setdefault(folder, pg_support.fresh_database())
    return open_engine(load_config(None, index=folder, embedder=embedder, **settings))


_databases: dict[Path, str] = {}  # a folder re-opened by a test gets its database back


@asynccontextmanager
async def serving(engine: Engine, tenant: str | None = None) -> AsyncIterator[MemoryPeer]:
    async with running(build_engine_app(engine), tenant=tenant) as peer:
        yield peer


class Calls:
    """Sequential request helper over a MemoryPeer that skips progress frames."""

    def __init__(self, peer: MemoryPeer) -> None:
        self.peer = peer
        self.next_id = 100

    async def __call__(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        self.peer.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            message: dict[str, Any] = await self.peer.recv(timeout=30)
            if message.get("id") == self.next_id:
                return message

    async def result(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        reply = await self(method, params)
        assert "result" in reply, reply
        result: dict[str, Any] = reply["result"]
        return result

    async def error(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        reply = await self(method, params)
        assert "error" in reply, reply
        error: dict[str, Any] = reply["error"]
        return error


@asynccontextmanager
async def indexed(engine: Engine, documents: Sequence[Mapping[str, Any]]) -> AsyncIterator[Calls]:
    """``engine`` served in memory with ``documents`` added: the calls to make on it."""
    async with serving(engine) as peer:
        calls = Calls(peer)
        await calls.result("index/add", {"documents": list(documents)})
        yield calls


def ids(result: Mapping[str, Any]) -> list[str]:
    """The ids of a retrieve result's hits, in rank order."""
    return [hit["id"] for hit in result["hits"]]
