"""Issue 35 item 6 and issue 36 item 4 through the real ``rcpkit mcp`` process over stdio.

Frames the MCP SDK cannot take are answered at once (not after the host's
timeout); write tools need asking for; a cursor names the argument that changed.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp_support import bridge_args, environment, http_bridge

pytestmark = pytest.mark.timeout(120)

_INIT = {
    "jsonrpc": "2.0",
    "id": "init",
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "frames-test", "version": "1"},
    },
}


class RawBridge:
    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self.lines: queue.Queue[bytes] = queue.Queue()
        assert process.stdout is not None
        threading.Thread(target=self._read, args=(process.stdout,), daemon=True).start()

    def _read(self, stream: Any) -> None:
        for line in stream:
            self.lines.put(line)

    def send(self, frame: bytes | dict[str, Any]) -> None:
        data = frame if isinstance(frame, bytes) else json.dumps(frame).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(data + b"\n")
        self.process.stdin.flush()

    def answer(self, timeout: float = 50.0) -> dict[str, Any]:
        # Under a host's usual 60 s timeout: an answer here is one the host would get.
        reply: dict[str, Any] = json.loads(self.lines.get(timeout=timeout))
        return reply

    def call(self, id: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        params = {"name": name, "arguments": arguments}
        self.send({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
        reply = self.answer()
        assert reply["id"] == id
        result: dict[str, Any] = reply["result"]
        return result


@contextmanager
def raw_bridge(*args: str) -> Iterator[RawBridge]:
    process = subprocess.Popen(
        [sys.executable, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=environment(),
    )
    try:
        bridge = RawBridge(process)
        bridge.send(_INIT)
        assert "result" in bridge.answer(timeout=60)
        bridge.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        yield bridge
    finally:
        assert process.stdin is not None
        process.stdin.close()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        assert process.stdout is not None
        process.stdout.close()


def _nested(id: int, depth: int) -> bytes:
    head = b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"retrieve",' % id
    tree = b'{"not":' * depth + b"{}" + b"}" * depth
    return head + b'"arguments":{"query":"x","filter":' + tree + b"}}}"


def test_malformed_oversized_and_deep_frames_are_answered_at_once(tmp_path: Path) -> None:
    huge = {
        "jsonrpc": "2.0",
        "id": 6,
        "method": "tools/call",
        "params": {"name": "retrieve", "arguments": {"query": "a" * 21_000_000}},
    }
    with raw_bridge(*bridge_args(tmp_path / "idx", "--writes")) as bridge:
        answers = []
        for frame in (b"{not json", b"[1, 2", _nested(5, 5000), json.dumps(huge).encode()):
            bridge.send(frame)
            answers.append(bridge.answer())  # within 50 s: not left to the host's 60 s
        alive = bridge.call(7, "retrieve", {"query": "still here"})
    codes = [(reply.get("id"), reply["error"]["code"]) for reply in answers]
    assert codes == [(None, -32700), (None, -32700), (5, -32700), (6, -32600)]
    assert "exceeds the bridge's limit" in answers[3]["error"]["message"]
    assert "content" in alive


def test_a_changed_k_with_a_cursor_names_k_and_the_hint_says_to_repeat_it(
    tmp_path: Path,
) -> None:
    documents = [{"id": f"d{i}", "text": f"solar panel note {i}"} for i in range(5)]
    with raw_bridge(*bridge_args(tmp_path / "idx", "--writes")) as bridge:
        bridge.call(1, "index_add", {"documents": documents})
        first = bridge.call(2, "retrieve", {"query": "solar panel note", "k": 2})
        cursor = first["structuredContent"]["nextCursor"]
        changed = bridge.call(
            3, "retrieve", {"query": "solar panel note", "k": 3, "cursor": cursor}
        )
        budget = {"query": "solar panel note", "k": 2, "tokenBudget": 50, "cursor": cursor}
        budgeted = bridge.call(4, "retrieve", budget)
        same = bridge.call(5, "retrieve", {"query": "solar panel note", "k": 2, "cursor": cursor})
    assert "same query, k, tokenBudget and filter" in first["content"][0]["text"]
    assert changed["isError"] and changed["structuredContent"]["error"]["data"] == {"field": "k"}
    assert "`k` is 3 but the call that returned this cursor had 2" in changed["content"][0]["text"]
    assert budgeted["isError"]
    assert budgeted["structuredContent"]["error"]["data"] == {"field": "tokenBudget"}
    assert not same.get("isError")


def test_a_default_call_does_not_repeat_each_hits_text_in_structured_content(
    tmp_path: Path,
) -> None:
    text = "The gateway fuses the ranked lists of many engines into one. " * 12
    documents = [{"id": f"n{i}", "text": f"note {i}. {text}"} for i in range(10)]
    with raw_bridge(*bridge_args(tmp_path / "idx", "--writes")) as bridge:
        bridge.call(1, "index_add", {"documents": documents})
        result = bridge.call(2, "retrieve", {"query": "how are lists fused"})
    shown = sum(len(block["text"]) for block in result["content"])
    structured = result["structuredContent"]
    assert len(structured["hits"]) == 10 and all("text" not in h for h in structured["hits"])
    assert "stages" not in structured.get("usage", {})
    assert len(json.dumps(structured)) < shown  # the text is said once, in the blocks


def _tool_names(bridge: RawBridge, request: int) -> set[str]:
    bridge.send({"jsonrpc": "2.0", "id": request, "method": "tools/list"})
    return {tool["name"] for tool in bridge.answer()["result"]["tools"]}


@pytest.mark.parametrize("flags", [(), ("--read-only",)], ids=["default", "read-only"])
def test_write_tools_need_asking_for(tmp_path: Path, flags: tuple[str, ...]) -> None:
    # Issue 52.9: `rcpkit mcp --index DIR` offered index_add/index_delete by default, so
    # a host wired from the docs' first line could delete the index. Only --writes does.
    index = tmp_path / "idx"
    with raw_bridge(*bridge_args(index, "--writes")) as bridge:  # creates the index
        assert {"index_add", "index_delete"} <= _tool_names(bridge, 1)
        bridge.call(2, "index_add", {"documents": [{"id": "a", "text": "apples"}]})
    with raw_bridge(*bridge_args(index, *flags)) as bridge:
        names = _tool_names(bridge, 3)
        refused = bridge.call(4, "index_delete", {"ids": ["a"]})
        kept = bridge.call(5, "retrieve", {"query": "apples"})
    assert names == {"retrieve"}
    assert refused["isError"] and refused["structuredContent"]["error"]["code"] == -32003
    assert "read-only" in refused["content"][0]["text"]
    assert "--writes" in refused["content"][0]["text"]
    assert [hit["id"] for hit in kept["structuredContent"]["hits"]] == ["a#0"]
    printed = subprocess.run(
        [sys.executable, *bridge_args(index), "--print-config"],
        capture_output=True,
        text=True,
        env=environment(),
        timeout=30,
    )
    writes = subprocess.run(
        [sys.executable, *bridge_args(index), "--print-config", "--writes"],
        capture_output=True,
        text=True,
        env=environment(),
        timeout=30,
    )
    assert "--read-only" in json.loads(printed.stdout)["mcpServers"]["rcpkit"]["args"]
    assert "--read-only" not in json.loads(writes.stdout)["mcpServers"]["rcpkit"]["args"]
    assert "--writes" in json.loads(writes.stdout)["mcpServers"]["rcpkit"]["args"]


def test_over_http_a_frame_the_sdk_would_take_for_a_notification_gets_its_error(
    tmp_path: Path,
) -> None:
    import httpx

    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    frames = {
        "boolean id": b'{"jsonrpc":"2.0","id":true,"method":"tools/list"}',
        "no method": b'{"jsonrpc":"2.0","id":9}',
        "oversized": _nested(8, 1) + b" " * (9 * 1024 * 1024),
    }
    with (
        http_bridge(bridge_args(tmp_path / "idx", "--writes")) as url,
        httpx.Client(timeout=30) as http,
    ):
        answers = {
            name: http.post(url, content=body, headers=headers) for name, body in frames.items()
        }
        hello = http.post(url, json=_INIT, headers=headers)
    assert {name: answer.status_code for name, answer in answers.items()} == {
        "boolean id": 400,
        "no method": 400,
        "oversized": 413,
    }
    assert answers["no method"].json()["id"] == 9
    assert answers["oversized"].json()["error"]["code"] == -32600
    assert hello.status_code == 200  # an ordinary frame still reaches the SDK
