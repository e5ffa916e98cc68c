"""The client against a scripted in-memory server: handshake, gating, ids, cancel, deadlines."""

from __future__ import annotations

import asyncio

import pytest
from client_support import ScriptedServer, finish, initialize_result, scripted_client

from rcpkit.client import (
    CallOptions,
    CapabilityMissing,
    Client,
    DeadlineExceeded,
    MalformedResult,
    OptionUnsupported,
    TransportClosed,
    VersionUnsupported,
)
from rcpkit.protocol import RCPError


async def test_connecting_sends_initialize_first_and_caches_the_capabilities() -> None:
    client, server = await scripted_client()
    assert client.protocol_version == 1
    assert client.server.name == "scripted"
    assert client.supports("retrieve") and not client.supports("embed")
    assert client.capabilities.retrieve is not None
    assert client.capabilities.retrieve.max_k == 50
    assert client.conformance == "L0"
    await finish(client, server)


async def test_initialize_offers_our_version_and_the_streaming_client_capability() -> None:
    server = ScriptedServer()
    connecting = asyncio.create_task(Client.connect(server.channel()))
    hello = await server.recv()
    assert hello["params"]["protocolVersion"] == 1
    assert hello["params"]["client"]["name"] == "rcpkit"
    assert "streaming" in hello["params"]["capabilities"]
    server.result(hello["id"], initialize_result())
    await finish(await connecting, server)


async def test_a_negotiated_version_outside_our_range_aborts_the_connection() -> None:
    server = ScriptedServer()
    connecting = asyncio.create_task(Client.connect(server.channel()))
    hello = await server.recv()
    server.result(hello["id"], initialize_result(version=0))
    with pytest.raises(VersionUnsupported) as caught:
        await connecting
    assert caught.value.code == -32002


async def test_an_unadvertised_method_is_refused_before_any_io() -> None:
    client, server = await scripted_client()
    with pytest.raises(CapabilityMissing) as caught:
        await client.embed(["x"])
    assert caught.value.code == -32003 and caught.value.capability == "embed"
    with pytest.raises(CapabilityMissing):
        await client.call("x-acme/frobnicate", {})
    assert await server.silent()
    await finish(client, server)


async def test_an_unadvertised_option_is_refused_before_any_io() -> None:
    client, server = await scripted_client()
    with pytest.raises(OptionUnsupported) as caught:
        await client.retrieve("q", mode="hybrid")
    assert caught.value.code == -32005 and caught.value.option == "mode"
    with pytest.raises(OptionUnsupported):
        await client.retrieve("q", fusion={"method": "weighted"})
    with pytest.raises(OptionUnsupported):
        await client.rerank("q", ["a"], method="cross-encoder")
    with pytest.raises(OptionUnsupported):
        await client.retrieve("q", filter={"field": "lang", "op": "ne", "value": "en"})
    with pytest.raises(RCPError) as unknown_field:
        await client.retrieve("q", filter={"field": "year", "op": "eq", "value": 1})
    assert unknown_field.value.code == -32602 and unknown_field.value.field == "filter.year"
    assert await server.silent()
    await finish(client, server)


async def test_malformed_params_are_refused_client_side_naming_the_field() -> None:
    client, server = await scripted_client()
    with pytest.raises(RCPError) as caught:
        await client.retrieve("q", k=0)
    assert caught.value.code == -32602 and caught.value.field == "k"
    with pytest.raises(TypeError, match="no_such_option"):  # typed keywords: mypy says so too
        await client.retrieve("q", no_such_option=True)
    assert await server.silent()
    await finish(client, server)


async def test_strict_false_lets_an_unadvertised_option_through_and_k_is_pre_clamped() -> None:
    client, server = await scripted_client()
    call = asyncio.create_task(client.retrieve("q", k=500, mode="hybrid", strict=False))
    request = await server.recv()
    assert request["params"]["mode"] == "hybrid"
    assert request["params"]["k"] == 50  # §4.7: pre-clamped to maxK
    server.result(request["id"], {"hits": []})
    assert (await call).hits == []
    await finish(client, server)


async def test_answers_are_correlated_by_id_not_by_arrival_order() -> None:
    client, server = await scripted_client()
    calls = [asyncio.create_task(client.retrieve(f"q{n}")) for n in range(3)]
    requests = [await server.recv() for _ in calls]
    for request in reversed(requests):
        query = request["params"]["query"]
        server.result(request["id"], {"hits": [{"id": query, "score": 1.0}]})
    results = await asyncio.gather(*calls)
    assert [result.hits[0].id for result in results] == ["q0", "q1", "q2"]
    await finish(client, server)


async def test_cancelling_the_awaiting_task_sends_cancel_and_discards_the_late_result(
    caplog: pytest.LogCaptureFixture,
) -> None:
    client, server = await scripted_client()
    call = asyncio.create_task(client.retrieve("slow"))
    request = await server.recv()
    call.cancel()
    cancel = await server.recv()
    assert cancel["method"] == "notifications/cancel"
    assert cancel["params"]["id"] == request["id"] and "id" not in cancel
    with pytest.raises(asyncio.CancelledError):
        await call
    server.result(request["id"], {"hits": [{"id": "late", "score": 1.0}]})  # §7.14: the race
    ping = asyncio.create_task(client.ping("still"))
    answer = await server.recv()
    server.result(answer["id"], {"nonce": "still"})
    assert (await ping).nonce == "still"
    assert "unknown id" not in caplog.text
    assert client.connection.in_flight == 0
    await finish(client, server)


async def test_a_soft_cancel_tolerates_the_full_result_arriving_anyway() -> None:
    client, server = await scripted_client()
    async with client.stream_retrieve("slow") as call:
        request = await server.recv()
        call.cancel("user navigated away")
        cancel = await server.recv()
        assert cancel["params"] == {"id": request["id"], "reason": "user navigated away"}
        server.result(request["id"], {"hits": [{"id": "full", "score": 1.0}]})
        assert (await call.result()).hits[0].id == "full"
    await finish(client, server)


async def test_a_soft_cancel_answered_with_cancelled_raises_it() -> None:
    client, server = await scripted_client()
    call = client.stream_retrieve("slow")
    request = await server.recv()
    call.cancel()
    await server.recv()
    server.error(request["id"], -32006, "cancelled")
    with pytest.raises(RCPError) as caught:
        await call
    assert caught.value.code == -32006
    await finish(client, server)


async def test_a_client_deadline_travels_as_deadline_ms_and_a_late_answer_is_discarded() -> None:
    client, server = await scripted_client()
    call = asyncio.create_task(client.retrieve("q", timeout=0.2))
    request = await server.recv()
    assert 0 < request["params"]["_meta"]["deadlineMs"] <= 200
    with pytest.raises(DeadlineExceeded) as caught:
        await call
    assert caught.value.code == -32014
    cancel = await server.recv()
    assert cancel["method"] == "notifications/cancel"
    server.result(request["id"], {"hits": []})  # late: correlated by id and dropped
    ping = asyncio.create_task(client.ping())
    answer = await server.recv()
    server.result(answer["id"], {})
    await ping
    await finish(client, server)


async def test_transport_death_fails_every_in_flight_call_with_a_clear_error() -> None:
    client, server = await scripted_client()
    calls = [asyncio.create_task(client.retrieve(f"q{n}")) for n in range(3)]
    for _ in calls:
        await server.recv()
    server.die()
    for call in calls:
        with pytest.raises(TransportClosed) as caught:
            await call
        assert "scripted server" in str(caught.value)
    with pytest.raises(TransportClosed):
        await client.ping()
    await finish(client, server)


async def test_rate_limited_calls_are_retried_no_sooner_than_retry_after_ms() -> None:
    client, server = await scripted_client()
    loop = asyncio.get_running_loop()
    call = asyncio.create_task(client.retrieve("q"))
    first = await server.recv()
    refused_at = loop.time()
    server.error(first["id"], -32011, "slow down", retryAfterMs=150)
    second = await server.recv()
    assert loop.time() - refused_at >= 0.14
    assert second["id"] != first["id"] and second["params"]["query"] == "q"
    server.result(second["id"], {"hits": []})
    assert (await call).hits == []
    await finish(client, server)


async def test_a_write_without_document_ids_is_never_retried() -> None:
    client, server = await scripted_client()
    call = asyncio.create_task(client.index_add([{"text": "no id"}]))
    request = await server.recv()
    server.error(request["id"], -32010, "backend down")
    with pytest.raises(RCPError) as caught:
        await call
    assert caught.value.code == -32010
    assert await server.silent()
    await finish(client, server)


async def test_a_write_with_an_idempotency_key_is_retried() -> None:
    client, server = await scripted_client()
    options = CallOptions(meta={"idempotencyKey": "k-1"})
    call = asyncio.create_task(client.index_add([{"text": "no id"}], options=options))
    first = await server.recv()
    server.error(first["id"], -32010, "backend down")
    second = await server.recv()
    assert second["params"]["_meta"]["idempotencyKey"] == "k-1"
    server.result(second["id"], {"ids": ["d1"]})
    assert (await call).ids == ["d1"]
    await finish(client, server)


async def test_progress_goes_to_its_own_call_and_frames_with_unknown_tokens_are_ignored() -> None:
    client, server = await scripted_client()
    seen: list[float] = []
    call = asyncio.create_task(client.retrieve("q", on_progress=lambda p: seen.append(p.progress)))
    request = await server.recv()
    token = request["params"]["_meta"]["progressToken"]
    progress = {"jsonrpc": "2.0", "method": "notifications/progress"}
    server.send({**progress, "params": {"progressToken": "someone-else", "progress": 0.9}})
    server.send({**progress, "params": {"progressToken": token, "progress": 0.5}})
    server.result(request["id"], {"hits": []})
    await call
    assert seen == [0.5]
    await finish(client, server)


async def test_a_streaming_call_iterates_its_frames_then_yields_the_result() -> None:
    client, server = await scripted_client()
    async with client.stream_retrieve("q", k=2) as call:
        request = await server.recv()
        token = request["params"]["_meta"]["progressToken"]
        for fraction in (0.25, 0.75):
            server.send(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/progress",
                    "params": {"progressToken": token, "progress": fraction, "stage": "recall"},
                }
            )
        server.result(request["id"], {"hits": [{"id": "a", "score": 1.0}]})
        events = [event async for event in call]
        assert [event.progress for event in events] == [0.25, 0.75]
        assert (await call.result()).hits[0].id == "a"
    await finish(client, server)


async def test_unknown_result_fields_are_tolerated_and_a_wrong_shape_is_an_error() -> None:
    client, server = await scripted_client()
    call = asyncio.create_task(client.retrieve("q"))
    request = await server.recv()
    hit = {"id": 7, "score": 2, "x-vendor": {"a": 1}, "citation": {"source": "s", "new": 1}}
    server.result(request["id"], {"hits": [hit], "futureField": True})
    result = await call
    assert result.hits[0].id == 7 and result.hits[0].score == 2.0
    broken = asyncio.create_task(client.retrieve("q"))
    request = await server.recv()
    server.result(request["id"], {"hits": "not a list"})
    with pytest.raises(MalformedResult):
        await broken
    await finish(client, server)


async def test_log_notifications_reach_the_client_callback_only_after_opting_in() -> None:
    server = ScriptedServer()
    logs: list[str] = []
    connecting = asyncio.create_task(
        Client.connect(server.channel(), on_log=lambda event: logs.append(event.message))
    )
    hello = await server.recv()
    assert "log" in hello["params"]["capabilities"]  # §17.1: the client opts in
    server.result(hello["id"], initialize_result())
    client = await connecting
    server.send(
        {"jsonrpc": "2.0", "method": "notifications/log",
         "params": {"level": "info", "message": "reranked 100→30"}}
    )  # fmt: skip
    ping = asyncio.create_task(client.ping())
    answer = await server.recv()
    server.result(answer["id"], {})
    await ping
    assert logs == ["reranked 100→30"]
    await finish(client, server)
