from __future__ import annotations

import msgspec

from server.apps import echo_app
from support import running, silent


async def test_a_batch_gets_one_response_per_request() -> None:
    async with running(echo_app()) as peer:
        peer.send(
            [
                {"jsonrpc": "2.0", "id": 1, "method": "ping"},
                {"jsonrpc": "2.0", "method": "notifications/whatever"},
                {"jsonrpc": "2.0", "id": "two", "method": "retrieve", "params": {"query": "q"}},
                {"jsonrpc": "2.0", "id": 3, "method": "unknown"},
                {"jsonrpc": "2.0", "id": 4, "method": "retrieve", "params": {"query": "q", "k": 0}},
            ]
        )
        replies = {reply["id"]: reply for reply in await peer.recv()}
        assert set(replies) == {1, "two", 3, 4}
        assert replies[3]["error"]["code"] == -32004
        assert replies[4]["error"]["data"]["field"] == "k"


async def test_malformed_members_get_invalid_request_entries_with_null_id() -> None:
    async with running(echo_app()) as peer:
        peer.send([1, {"jsonrpc": "2.0"}, {"jsonrpc": "2.0", "id": 5, "method": "ping"}])
        replies = await peer.recv()
        assert sorted(reply["id"] or 0 for reply in replies) == [0, 0, 5]
        nulls = [reply for reply in replies if reply["id"] is None]
        assert all(reply["error"]["code"] == -32600 for reply in nulls)


async def test_an_empty_batch_is_one_non_array_invalid_request() -> None:
    async with running(echo_app()) as peer:
        peer.write(b"[]\n")
        reply = await peer.recv()
        assert reply == {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32600, "message": "empty batch"},
        }


async def test_a_batch_of_notifications_only_produces_nothing() -> None:
    async with running(echo_app()) as peer:
        peer.send(
            [
                {"jsonrpc": "2.0", "method": "notifications/a"},
                {"jsonrpc": "2.0", "method": "notifications/cancel", "params": {"id": 1}},
            ]
        )
        assert await silent(peer)


async def test_an_oversized_batch_is_rejected_whole() -> None:
    async with running(echo_app(), max_batch=3) as peer:
        peer.send([{"jsonrpc": "2.0", "id": i, "method": "ping"} for i in range(4)])
        reply = await peer.recv()
        assert reply["id"] is None
        assert reply["error"]["code"] == -32602
        assert reply["error"]["data"]["limit"] == 3


async def test_batch_members_are_gated_like_single_requests() -> None:
    async with running(echo_app(), initialize=False) as peer:
        peer.send(
            [
                {"jsonrpc": "2.0", "id": 1, "method": "retrieve", "params": {"query": "q"}},
                {"jsonrpc": "2.0", "id": 2, "method": "ping"},
            ]
        )
        replies = {reply["id"]: reply for reply in msgspec.json.decode(await peer.recv_line())}
        assert replies[1]["error"]["code"] == -32001
        assert replies[2]["result"] == {}
