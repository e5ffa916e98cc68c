"""Federation over real ``rcpkit serve`` subprocesses with different corpora (§16)."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import pytest
from federation_support import KEYWORD, PYTHON

from rcpkit.client import StdioChannel
from rcpkit.federation import Federation, parse_registry
from rcpkit.protocol import RCPError

SLOW = [PYTHON, str(Path(__file__).with_name("slow_engine_support.py"))]
# Only catches a hang: each wait below ends on its event (a file, an answer). A real
# `rcpkit serve` took 10-11 s to start under load 17 on 2 cores (issue 52), past the
# gateway's 10 s default connect timeout, so every gateway here is given this too.
PATIENT = 60.0
SLOW_MACHINE = {"connect_timeout": PATIENT, "engine_timeout": PATIENT, "query_timeout": 600.0}


def _pid(federation: Federation, id: str) -> int:
    state = next(state for state in federation.engines if state.id == id)
    assert state.client is not None
    channel = state.client.connection.channel
    assert isinstance(channel, StdioChannel) and channel.pid is not None
    return channel.pid


async def test_two_real_engines_over_different_corpora_are_fused() -> None:
    registry = parse_registry(
        {
            "engines": [
                {"id": "samples", "transport": "stdio", "command": [*KEYWORD, "--sample"]},
                {"id": "notes", "transport": "stdio", "command": KEYWORD, "weight": 2.0},
            ]
        }
    )
    async with Federation(registry, **SLOW_MACHINE) as federation:
        notes = next(state for state in federation.engines if state.id == "notes").client
        assert notes is not None
        await notes.index_add(
            [{"id": "n-rrf", "text": "our notes on reciprocal rank fusion and its constant k"}]
        )
        result = await federation.retrieve("reciprocal rank fusion", k=4)
        assert federation.guaranteed_capabilities >= {"retrieve", "citations"}
    origins = {hit.meta["engine"]: hit.id for hit in result.hits}
    assert origins == {"notes": "n-rrf", "samples": "hybrid-fusion"}
    assert result.hits[0].id == "n-rrf"  # weight 2.0 wins the tie at rank 1
    assert not result.degraded


def _appears(path: Path) -> None:
    give_up = time.monotonic() + PATIENT
    while not path.exists():
        assert time.monotonic() < give_up, f"{path} never appeared"
        time.sleep(0.02)


async def test_an_engine_killed_mid_query_leaves_a_degraded_result(tmp_path: Path) -> None:
    inside = tmp_path / "inside-retrieve"
    registry = parse_registry(
        {
            "engines": [
                {"id": "samples", "transport": "stdio", "command": [*KEYWORD, "--sample"]},
                {"id": "slow", "transport": "stdio", "command": [*SLOW, str(inside)]},
            ]
        }
    )
    # No timer of the gateway's may end the slow engine's call: only its death does.
    timers = {**SLOW_MACHINE, "engine_timeout": None}
    async with Federation(registry, **timers) as federation:
        query = asyncio.create_task(federation.retrieve("slow", k=3))
        await asyncio.to_thread(_appears, inside)  # "slow" is in a retrieve that never ends
        assert not query.done()
        os.kill(_pid(federation, "slow"), signal.SIGKILL)
        result = await asyncio.wait_for(query, PATIENT)
    assert result.answered == ("samples",)
    (failure,) = result.failures
    assert failure.engine == "slow" and failure.code == -32010
    assert "transport closed" in failure.message
    assert result.to_wire()["_meta"]["degraded"][0]["engine"] == "slow"


async def test_a_required_engine_that_dies_fails_the_whole_query_with_its_code() -> None:
    registry = parse_registry(
        {
            "engines": [
                {"id": "samples", "transport": "stdio", "command": [*KEYWORD, "--sample"]},
                {"id": "core", "transport": "stdio", "command": KEYWORD, "required": True},
            ]
        }
    )
    async with Federation(registry, **SLOW_MACHINE) as federation:
        os.kill(_pid(federation, "core"), signal.SIGKILL)
        with pytest.raises(RCPError) as caught:
            await federation.retrieve("bm25", k=3)
    assert caught.value.code == -32010
    assert "required engine 'core' failed" in caught.value.message
