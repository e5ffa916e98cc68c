"""The HTTP channel against httpx's MockTransport: status mapping, Retry-After, SSE, sessions."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from client_support import initialize_result

from rcpkit.client import Client, HttpChannel, HttpEndpoint
from rcpkit.client.http import status_error
from rcpkit.protocol import RCPError

URL = "http://rcp.test/rcp"


def test_non_200_statuses_map_to_the_rcp_codes_they_mirror() -> None:
    assert status_error(401, b"", {}).code == -32012
    assert status_error(404, b"", {}).code == -32010
    assert status_error(413, b"", {}).code == -32013
    limited = status_error(429, b"", {"retry-after": "2"})
    assert (limited.code, limited.retry_after_ms) == (-32011, 2000)
    body = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"bad"}}'
    assert status_error(400, body, {}).code == -32600  # the body's own code wins


class Scripted:
    """A MockTransport handler: answers per method, records what it saw."""

    def __init__(self, **answers: Any) -> None:
        self.answers = answers
        self.seen: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(request)
        method = request.url.path.removeprefix("/rcp/")
        message = json.loads(request.content)
        answer = self.answers[method]
        if callable(answer):
            return answer(message, request)
        return httpx.Response(200, json={"jsonrpc": "2.0", "id": message["id"], "result": answer})


def _client_for(handler: Scripted, **options: Any) -> Any:
    channel = HttpChannel(HttpEndpoint(URL, token="t0k"), transport=httpx.MockTransport(handler))
    return Client.connect(channel, **options), channel


async def test_posts_go_to_base_slash_method_with_the_bearer_token_and_the_session() -> None:
    def initialize(message: dict[str, Any], _request: httpx.Request) -> httpx.Response:
        result = {**initialize_result(), "_meta": {"session": "s-1"}}
        return httpx.Response(200, json={"jsonrpc": "2.0", "id": message["id"], "result": result})

    handler = Scripted(initialize=initialize, ping={"nonce": 1}, shutdown={})
    connecting, channel = _client_for(handler)
    client = await connecting
    assert channel.session == "s-1"
    await client.ping(1)
    await client.close()
    ping = handler.seen[1]
    assert str(ping.url) == f"{URL}/ping"
    assert ping.headers["authorization"] == "Bearer t0k"
    assert ping.headers["rcp-session"] == "s-1"
    assert ping.headers["content-type"] == "application/json"


async def test_a_429_is_retried_after_its_retry_after() -> None:
    calls: list[int] = []

    def retrieve(message: dict[str, Any], _request: httpx.Request) -> httpx.Response:
        calls.append(message["id"])
        if len(calls) == 1:
            return httpx.Response(429, headers={"retry-after": "0"}, json={"error": "slow"})
        return httpx.Response(
            200, json={"jsonrpc": "2.0", "id": message["id"], "result": {"hits": []}}
        )

    handler = Scripted(initialize=initialize_result(), retrieve=retrieve, shutdown={})
    connecting, _ = _client_for(handler)
    client = await connecting
    assert (await client.retrieve("q")).hits == []
    assert len(calls) == 2 and calls[0] != calls[1]
    await client.close()


async def test_progress_arrives_over_sse_and_an_answerless_exchange_fails_at_once() -> None:
    def streamed(message: dict[str, Any], request: httpx.Request) -> httpx.Response:
        assert "text/event-stream" in request.headers["accept"]
        token = message["params"]["_meta"]["progressToken"]
        frames = [
            {"jsonrpc": "2.0", "method": "notifications/progress",
             "params": {"progressToken": token, "progress": 0.5}},
            {"jsonrpc": "2.0", "id": message["id"], "result": {"hits": [{"id": "a", "score": 1}]}},
        ]  # fmt: skip
        body = "".join(f"data: {json.dumps(frame)}\n\n" for frame in frames)
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, text=body)

    handler = Scripted(initialize=initialize_result(), retrieve=streamed, shutdown={})
    connecting, _ = _client_for(handler)
    client = await connecting
    async with client.stream_retrieve("q") as call:
        assert [event.progress async for event in call] == [0.5]
        assert (await call.result()).hits[0].id == "a"
    handler.answers["retrieve"] = lambda message, _request: httpx.Response(200, content=b"")
    with pytest.raises(RCPError) as caught:
        await client.retrieve("q", timeout=30)
    assert "without a JSON-RPC response" in caught.value.message
    await client.close()
