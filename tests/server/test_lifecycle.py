from __future__ import annotations

import asyncio

from rcpkit.server.app import App
from server.apps import PATIENT, Probe, echo_app, probe_app
from support import running, silent


async def test_gated_methods_before_initialize_are_not_initialized() -> None:
    async with running(echo_app(), initialize=False) as peer:
        reply = await peer.request(1, "retrieve", {"query": "q"})
        assert reply["error"]["code"] == -32001


async def test_info_ping_and_shutdown_work_before_initialize() -> None:
    async with running(echo_app(), initialize=False) as peer:
        info = await peer.request(1, "info")
        assert info["result"]["server"] == {"name": "echo", "version": "1"}
        assert (await peer.request(2, "ping", {"nonce": "n-1"}))["result"] == {"nonce": "n-1"}
        assert (await peer.request(3, "shutdown", {}))["result"] == {}


async def test_a_failed_negotiation_leaves_the_session_uninitialized_and_retry_works() -> None:
    async with running(echo_app(), initialize=False) as peer:
        failed = await peer.request(1, "initialize", {"protocolVersion": 0})
        assert failed["error"]["code"] == -32002
        assert (await peer.request(2, "retrieve", {"query": "q"}))["error"]["code"] == -32001
        ok = await peer.request(3, "initialize", {"protocolVersion": 1})
        assert ok["result"]["protocolVersion"] == 1
        assert "result" in await peer.request(4, "retrieve", {"query": "q"})


async def test_the_negotiated_version_is_the_minimum_of_both() -> None:
    async with running(echo_app(), initialize=False) as peer:
        reply = await peer.request(1, "initialize", {"protocolVersion": 7})
        assert reply["result"]["protocolVersion"] == 1


async def test_a_second_initialize_is_an_invalid_request() -> None:
    async with running(echo_app()) as peer:
        reply = await peer.request(1, "initialize", {"protocolVersion": 1})
        assert reply["error"]["code"] == -32600


async def test_info_reports_the_capabilities_of_initialize() -> None:
    async with running(echo_app(), initialize=False) as peer:
        before = (await peer.request(1, "info"))["result"]
        hello = (await peer.request(2, "initialize", {"protocolVersion": 1}))["result"]
        after = (await peer.request(3, "info"))["result"]
        assert before["capabilities"] == hello["capabilities"] == after["capabilities"]
        assert hello["capabilities"] == {"retrieve": {"maxK": 5, "modes": ["sparse"]}}


async def test_conformance_is_declared_honestly() -> None:
    async with running(echo_app()) as peer:
        info = (await peer.request(1, "info"))["result"]
        # Only sparse retrieve, no filter or citations: L0, not L1.
        assert info["_meta"]["conformance"] == "L0"


async def test_ping_echoes_the_nonce_with_its_type() -> None:
    async with running(echo_app()) as peer:
        assert (await peer.request(1, "ping", {"nonce": 42}))["result"] == {"nonce": 42}
        assert (await peer.request(2, "ping"))["result"] == {}


async def test_nothing_after_shutdown_is_processed_but_in_flight_work_finishes() -> None:
    probe = Probe()
    async with running(probe_app(probe)) as peer:
        peer.send(
            {"jsonrpc": "2.0", "id": "slow", "method": "retrieve", "params": {"query": "block"}}
        )
        await asyncio.wait_for(probe.started.wait(), PATIENT)
        peer.send({"jsonrpc": "2.0", "id": "bye", "method": "shutdown", "params": {}})
        assert (await peer.recv())["id"] == "bye"
        peer.send({"jsonrpc": "2.0", "id": "late", "method": "ping"})
        assert await silent(peer)
        probe.release.set()
        assert (await peer.recv())["id"] == "slow"
        assert "late" not in probe.finished


async def test_end_of_input_finishes_in_flight_requests() -> None:
    probe = Probe()
    async with running(probe_app(probe)) as peer:
        peer.send({"jsonrpc": "2.0", "id": 1, "method": "retrieve", "params": {"query": "block"}})
        await asyncio.wait_for(probe.started.wait(), PATIENT)
        peer.close()
        asyncio.get_running_loop().call_later(0.05, probe.release.set)
        assert (await peer.recv())["result"]["hits"][0]["id"] == "block"


async def test_capabilities_are_fixed_once_a_session_started() -> None:
    app: App = echo_app()
    async with running(app):
        try:
            app.advertise("streaming")
        except RuntimeError:
            pass
        else:
            raise AssertionError("advertise after start must fail (§13.2)")
