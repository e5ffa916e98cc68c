"""The client over HTTP against a real ``rcpkit serve --http`` (bearer auth, SSE, sessions)."""

from __future__ import annotations

import asyncio

import pytest
from client_support import announced_http, http_server_command

from rcpkit.client import Client, HttpChannel, HttpEndpoint
from rcpkit.protocol import RCPError

TOKEN = "test-token-not-a-secret"
AUTH = {"RCPKIT_HTTP_TOKENS": TOKEN}


async def test_a_session_over_http_with_a_bearer_token() -> None:
    command = http_server_command("--engine", "keyword", "--sample")
    with announced_http(command, AUTH) as (url, _):
        async with await Client.connect_http(url, token=TOKEN) as client:
            assert client.server.name == "rcpkit-keyword"
            results = await asyncio.gather(*(client.retrieve("bm25", k=1) for _ in range(5)))
            assert {result.hits[0].id for result in results} == {"bm25"}
            assert (await client.ping(3)).nonce == 3


async def test_a_missing_token_is_refused_as_unauthorized_before_initialize() -> None:
    command = http_server_command("--engine", "keyword", "--sample")
    with announced_http(command, AUTH) as (url, _):
        with pytest.raises(RCPError) as caught:
            await Client.connect_http(url, connect_timeout=30)
        assert caught.value.code == -32012
        assert (caught.value.extra or {}).get("httpStatus") == 401


async def test_progress_streams_over_server_sent_events() -> None:
    command = http_server_command("--engine", "keyword", "--sample")
    with announced_http(command) as (url, _):
        async with await Client.connect_http(url) as client:
            async with client.stream_retrieve("bm25", k=2) as call:
                tokens = {getattr(event, "progress_token", None) async for event in call}
                result = await call.result()
            assert len(tokens) == 1 and None not in tokens
            assert result.hits[0].id == "bm25"


async def test_a_stateful_session_is_kept_and_renewed_once_it_expires() -> None:
    command = http_server_command(
        "--engine", "keyword", "--sample", "--stateful", "--session-ttl", "0.4"
    )
    with announced_http(command) as (url, _):
        channel = HttpChannel(HttpEndpoint(url))
        client = await Client.connect(channel)
        first = channel.session
        assert first
        assert (await client.retrieve("bm25", k=1)).hits[0].id == "bm25"
        await asyncio.sleep(0.6)  # the server forgets the session (its TTL is the subject)
        assert (await client.retrieve("bm25", k=1)).hits[0].id == "bm25"  # -32001 → re-initialize
        assert channel.session and channel.session != first
        await client.close()
