"""The Selector (§16.1): lazy, priority order, liveness via ping, failover."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest
from federation_support import KEYWORD, Engine, connector, registry

from rcpkit.client import StdioChannel
from rcpkit.federation import NoLiveEngine, Selector, UnknownEngine
from rcpkit.federation.registry import EngineSpec

DOCS = {"d1": "rank fusion"}


def _counting(engines: dict[str, Engine]) -> tuple[list[str], object]:
    calls: list[str] = []
    inner = connector(engines)

    async def connect(spec: EngineSpec):
        calls.append(spec.id)
        return await inner(spec)

    return calls, connect


async def test_a_selector_opens_no_connection_until_a_select() -> None:
    calls, connect = _counting({"a": Engine("A", DOCS), "b": Engine("B", DOCS)})
    selector = Selector(registry([{"id": "a"}, {"id": "b", "priority": 5}]), connector=connect)
    assert calls == [] and selector.connected == []
    client = await selector.select_primary()
    assert client.server.name == "B" and calls == ["b"]  # only the winner
    assert await selector.select_primary() is client and calls == ["b"]  # reused after a ping
    await selector.close()


async def test_select_by_id_and_an_unknown_id_is_named_in_the_error() -> None:
    selector = Selector(registry([{"id": "a"}]), connector=connector({"a": Engine("A", DOCS)}))
    assert (await selector.select("a")).server.name == "A"
    with pytest.raises(UnknownEngine, match="'nope'"):
        await selector.select("nope")
    await selector.close()


async def test_select_primary_walks_down_the_priority_order_past_dead_engines() -> None:
    specs = [{"id": "dead", "priority": 9}, {"id": "b", "priority": 1}, {"id": "c", "priority": 5}]
    selector = Selector(
        registry(specs), connector=connector({"b": Engine("B", DOCS), "c": Engine("C", DOCS)})
    )
    assert (await selector.select_primary()).server.name == "C"
    await selector.close()


async def test_select_capable_skips_live_engines_lacking_the_capability() -> None:
    engines = {"plain": Engine("P", DOCS), "agg": Engine("G", DOCS, catalog_identity="g")}
    specs = [{"id": "plain", "priority": 9}, {"id": "agg", "priority": 1}]
    selector = Selector(registry(specs), connector=connector(engines))
    assert (await selector.select_capable("catalog")).server.name == "G"
    assert (await selector.select_capable("retrieve")).server.name == "P"
    with pytest.raises(NoLiveEngine) as caught:
        await selector.select_capable("embed")
    assert caught.value.code == -32010 and "does not advertise `embed`" in caught.value.message
    await selector.close()


async def test_the_selector_fails_over_when_the_primary_process_is_killed(tmp_path: Path) -> None:
    path = tmp_path / "rcp.json"
    engines = [
        {"id": "primary", "transport": "stdio", "command": KEYWORD, "priority": 10},
        {"id": "secondary", "transport": "stdio", "command": [*KEYWORD, "--sample"], "priority": 1},
    ]
    path.write_text(json.dumps({"engines": engines}))
    # Bounds that only catch a hang: a loaded machine took 10-11 s to start a serve
    # (issue 52), and a 2 s ping could drop a live primary. A killed one fails at once.
    async with Selector.load(path, ping_timeout=60.0, connect_timeout=60.0) as selector:
        primary = await selector.select_primary()
        assert selector.connected == ["primary"]
        channel = primary.connection.channel
        assert isinstance(channel, StdioChannel) and channel.pid is not None
        os.kill(channel.pid, signal.SIGKILL)
        fallback = await selector.select_primary()
        assert fallback is not primary
        assert (await fallback.retrieve("bm25", k=1)).hits[0].id == "bm25"
        assert selector.connected == ["secondary"]


async def test_a_failed_engine_is_passed_over_then_tried_again_after_its_cool_down() -> None:
    now = [0.0]
    engines = {"b": Engine("B", DOCS)}
    specs = [{"id": "a", "priority": 9}, {"id": "b", "priority": 1}]
    selector = Selector(
        registry(specs), connector=connector(engines), retry_dead_after=10.0, clock=lambda: now[0]
    )
    assert (await selector.select_primary()).server.name == "B"  # "a" is down
    engines["a"] = Engine("A", DOCS)
    assert (await selector.select_primary()).server.name == "B"  # still cooling down
    now[0] = 11.0
    assert (await selector.select_primary()).server.name == "A"  # fails back to the primary
    await selector.close()
