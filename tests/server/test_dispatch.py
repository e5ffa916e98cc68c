from __future__ import annotations

import asyncio
import logging

import pytest

from server.apps import PATIENT, Probe, probe_app
from support import running, silent


def request(id: object, method: str, params: dict | None = None) -> dict:
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": params or {}}


def cancel(id: object) -> dict:
    return {"jsonrpc": "2.0", "method": "notifications/cancel", "params": {"id": id}}


async def test_a_slow_request_does_not_block_others_on_the_connection() -> None:
    probe = Probe()
    async with running(probe_app(probe)) as peer:
        peer.send(request(1, "retrieve", {"query": "block"}))
        await asyncio.wait_for(probe.started.wait(), PATIENT)
        peer.send(request(2, "ping"))
        peer.send(request(3, "retrieve", {"query": "fast"}))
        answered = [(await peer.recv())["id"], (await peer.recv())["id"]]
        assert sorted(answered) == [2, 3]  # answered while 1 is still running
        probe.release.set()
        assert (await peer.recv())["id"] == 1


async def test_cancel_stops_an_async_handler_and_answers_cancelled_once() -> None:
    probe = Probe()
    async with running(probe_app(probe)) as peer:
        peer.send(request("c", "retrieve", {"query": "block"}))
        await asyncio.wait_for(probe.started.wait(), PATIENT)
        peer.send(cancel("c"))
        reply = await peer.recv()
        assert reply == {
            "jsonrpc": "2.0",
            "id": "c",
            "error": {"code": -32006, "message": "cancelled"},
        }
        assert probe.stopped.is_set()
        assert await silent(peer)


async def test_cancel_stops_a_worker_thread_at_its_next_checkpoint() -> None:
    probe = Probe()
    async with running(probe_app(probe)) as peer:
        peer.send(request(5, "rerank", {"query": "q", "passages": ["a"]}))
        assert await asyncio.to_thread(probe.thread_started.wait, PATIENT)
        peer.send(cancel(5))
        assert (await peer.recv())["error"]["code"] == -32006
        assert await asyncio.to_thread(probe.stopped.wait, PATIENT)
        steps = probe.steps
        await asyncio.sleep(0.05)
        assert probe.steps == steps  # the loop really stopped


async def test_cancelling_an_unknown_or_answered_id_is_a_no_op() -> None:
    probe = Probe()
    async with running(probe_app(probe)) as peer:
        assert "result" in await peer.request(1, "retrieve", {"query": "done"})
        peer.send(cancel(1))
        peer.send(cancel("never-sent"))
        assert await silent(peer)
        assert (await peer.request(2, "ping"))["id"] == 2


async def test_cancel_carrying_an_id_is_an_invalid_request() -> None:
    async with running(probe_app(Probe())) as peer:
        reply = await peer.request(9, "notifications/cancel", {"id": 1})
        assert reply["error"]["code"] == -32600


async def test_notifications_are_never_answered_known_or_unknown() -> None:
    async with running(probe_app(Probe())) as peer:
        peer.send({"jsonrpc": "2.0", "method": "notifications/progress", "params": {}})
        peer.send({"jsonrpc": "2.0", "method": "notifications/future-thing"})
        peer.send({"jsonrpc": "2.0", "method": "retrieve", "params": {"query": "q"}})
        peer.send({"jsonrpc": "2.0", "method": "no-such-method"})
        assert await silent(peer, 0.2)


async def test_the_server_deadline_answers_timeout_and_stops_the_handler() -> None:
    probe = Probe()
    async with running(probe_app(probe), deadline=0.1) as peer:
        reply = await peer.request(1, "retrieve", {"query": "block"}, timeout=PATIENT)
        assert reply["error"]["code"] == -32014
        assert probe.stopped.is_set()


async def test_meta_deadline_ms_shortens_the_deadline_of_one_request() -> None:
    probe = Probe()
    async with running(probe_app(probe)) as peer:
        reply = await peer.request(
            1, "rerank", {"query": "q", "passages": ["a"], "_meta": {"deadlineMs": 50}}
        )
        assert reply["error"]["code"] == -32014
        assert await asyncio.to_thread(probe.stopped.wait, PATIENT)


async def test_a_duplicate_in_flight_id_is_refused_without_disturbing_the_first() -> None:
    probe = Probe()
    async with running(probe_app(probe)) as peer:
        peer.send(request(1, "retrieve", {"query": "block"}))
        await asyncio.wait_for(probe.started.wait(), PATIENT)
        duplicate = await peer.request(1, "ping")
        assert duplicate["error"]["code"] == -32600
        probe.release.set()
        assert "result" in await peer.recv()


async def test_an_unexpected_exception_is_an_internal_error_without_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with running(probe_app(Probe())) as peer:
        with caplog.at_level(logging.ERROR, "rcpkit"):
            reply = await peer.request(1, "retrieve", {"query": "boom"})
        assert reply["error"] == {"code": -32603, "message": "internal error"}
        assert "secret" not in str(reply)
        assert "secret internal detail" in caplog.text  # logged on our side


async def test_nan_scores_are_replaced_before_they_reach_the_wire() -> None:
    async with running(probe_app(Probe())) as peer:
        line = None
        peer.send(request(1, "retrieve", {"query": "nan"}))
        line = await peer.recv_line()
        assert b"NaN" not in line
        assert b'"score":0.0' in line


async def test_an_unencodable_result_is_an_internal_error() -> None:
    async with running(probe_app(Probe())) as peer:
        reply = await peer.request(1, "retrieve", {"query": "unencodable"})
        assert reply["error"]["code"] == -32603


@pytest.mark.parametrize("token", ["t-1", 7])
async def test_progress_echoes_the_token_and_precedes_the_response(token: object) -> None:
    async with running(probe_app(Probe())) as peer:
        peer.send(request(1, "retrieve", {"query": "progress", "_meta": {"progressToken": token}}))
        first, second, final = await peer.recv(), await peer.recv(), await peer.recv()
        assert first["method"] == second["method"] == "notifications/progress"
        assert first["params"] == {
            "progressToken": token,
            "progress": 0.25,
            "stage": "recall",
            "message": "first",
        }
        assert second["params"]["partial"]["hits"][0]["id"] == "a"
        assert final["id"] == 1


async def test_no_progress_without_a_token() -> None:
    async with running(probe_app(Probe())) as peer:
        reply = await peer.request(1, "retrieve", {"query": "progress"})
        assert reply["id"] == 1


async def test_no_progress_when_streaming_is_not_advertised() -> None:
    async with running(probe_app(Probe(), streaming=False)) as peer:
        params = {"query": "progress", "_meta": {"progressToken": "t"}}
        assert (await peer.request(1, "retrieve", params))["id"] == 1


async def test_logs_go_only_to_clients_that_opted_in_at_their_level() -> None:
    async with running(
        probe_app(Probe()), init_params={"capabilities": {"log": {}}, "_meta": {"logLevel": "info"}}
    ) as peer:
        peer.send(request(1, "retrieve", {"query": "log"}))
        log_line = await peer.recv()
        assert log_line["method"] == "notifications/log"
        assert log_line["params"] == {"level": "warning", "message": "a warning", "data": {"n": 1}}
        assert (await peer.recv())["id"] == 1
    async with running(probe_app(Probe())) as peer:
        assert (await peer.request(1, "retrieve", {"query": "log"}))["id"] == 1


async def test_a_cancel_arriving_with_its_request_still_gets_exactly_one_answer() -> None:
    probe = Probe()
    async with running(probe_app(probe)) as peer:
        request_line = b'{"jsonrpc":"2.0","id":2,"method":"retrieve","params":{"query":"block"}}'
        cancel_line = b'{"jsonrpc":"2.0","method":"notifications/cancel","params":{"id":2}}'
        peer.write(request_line + b"\n" + cancel_line + b"\n")  # one read
        reply = await peer.recv()
        assert reply["id"] == 2
        assert reply["error"]["code"] == -32006
        assert (await peer.request(2, "ping"))["result"] == {}  # the id is free again


async def test_requests_beyond_the_in_flight_cap_are_rate_limited_with_a_retry_hint() -> None:
    probe = Probe()
    async with running(probe_app(probe), max_in_flight=2) as peer:
        peer.send(request(1, "retrieve", {"query": "block"}))
        peer.send(request(2, "retrieve", {"query": "block"}))
        await asyncio.wait_for(probe.started.wait(), PATIENT)
        refused = await peer.request(3, "retrieve", {"query": "fast"})
        assert refused["error"]["code"] == -32011
        assert refused["error"]["data"]["retryable"] is True
        assert refused["error"]["data"]["retryAfterMs"] > 0
        assert (await peer.request(4, "ping"))["result"] == {}  # lifecycle is never refused
        probe.release.set()
        assert sorted([(await peer.recv())["id"], (await peer.recv())["id"]]) == [1, 2]
        assert (await peer.request(5, "retrieve", {"query": "fast"}))["result"]["hits"]


async def test_the_runtime_applies_a_default_deadline_and_a_longer_one_to_writes() -> None:
    from rcpkit.protocol import messages as m
    from rcpkit.server.app import App
    from rcpkit.server.context import RequestContext
    from rcpkit.server.limits import DEFAULT_DEADLINE_SECONDS, DEFAULT_WRITE_DEADLINE_SECONDS

    seen: dict[str, float | None] = {}
    app = App("deadlines", "1")

    @app.retrieve(max_k=5)
    async def retrieve(params: m.RetrieveParams, ctx: RequestContext) -> m.RetrieveResult:
        seen["retrieve"] = ctx.remaining()
        return m.RetrieveResult(hits=[])

    @app.index_add(writable=True)
    async def add(params: m.IndexAddParams, ctx: RequestContext) -> m.IndexAddResult:
        seen["index/add"] = ctx.remaining()
        return m.IndexAddResult(ids=[])

    async with running(app) as peer:
        assert "result" in await peer.request(1, "retrieve", {"query": "q"})
        assert "result" in await peer.request(2, "index/add", {"documents": []})
    read, write = seen["retrieve"], seen["index/add"]
    assert read is not None and DEFAULT_DEADLINE_SECONDS - 5 < read <= DEFAULT_DEADLINE_SECONDS
    assert write is not None and write > DEFAULT_WRITE_DEADLINE_SECONDS - 5
