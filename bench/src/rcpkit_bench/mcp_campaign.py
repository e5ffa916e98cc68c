"""``rcpkit bench mcp``: the MCP bridge under attack, over stdio and Streamable HTTP (issue 34).

Against the real ``rcpkit mcp --index DIR`` process (the deterministic
``hashing:64`` embedder), each transport gets, after a proper handshake:

* malformed frames: not JSON, truncated, an empty batch, the wrong ``jsonrpc``,
  no ``method``, a boolean id, nesting 5,000 levels deep, a 9 MB frame, an
  unknown method;
* huge and mistyped tool arguments: an unknown tool, ``k`` as a string,
  negative and absurd, a filter as a string and nested 100 deep, arguments as
  a list, a numeric query, a 500 KB query, no query, a forged cursor, a
  ``tools/call`` without params, a tool name that is a number;
* write tools without permission (a bridge started without ``--writes``: the
  default over stdio, ``--read-only`` spelled out over HTTP);
* a cancellation storm: many calls in flight, each cancelled at once, then an
  ordinary call.

Every request must be answered exactly once (a cancelled one may go
unanswered: MCP says the receiver should not answer it), within
``_REPLY_TIMEOUT``, with a clear error where one is due (a JSON-RPC error whose
message says what was wrong, which the SDK's bare "Invalid request parameters"
does not; an HTTP 4xx with a body; or a tool error with its text); the bridge
must never crash and must answer an ordinary call after each attack. Counts:
requests, crashes, hangs, ``-32603``, unclear errors, double answers.
"""

from __future__ import annotations

import json
import os
import queue
import re
import select
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rcpkit_bench.report import Figure, Scale

__all__ = ["Tally", "run"]

_REPLY_TIMEOUT = 15.0
_STORM: dict[Scale, int] = {"full": 60, "quick": 20, "smoke": 8}
_REPEATS: dict[Scale, int] = {"full": 5, "quick": 2, "smoke": 1}
_PROTOCOL = "2025-06-18"
# What a case must get: "error" (JSON-RPC error or HTTP 4xx), "tool-error", or "answer"
# (a result or a tool error: either is a clear answer to an odd but legal call).
Expect = str
# Errors that say nothing about what was wrong (the MCP SDK's own, for bad params).
_GENERIC = {"invalid request parameters", "invalid params", "internal error"}


@dataclass
class Tally:
    requests: int = 0
    crashes: int = 0
    hangs: int = 0
    internal: int = 0
    unclear: int = 0
    doubled: int = 0
    notes: list[str] = field(default_factory=list)

    def miss(self, kind: str, what: str) -> None:
        setattr(self, kind, getattr(self, kind) + 1)
        self.notes.append(what)


def _call(id: int, name: Any, arguments: Any) -> bytes:
    params = {"name": name, "arguments": arguments}
    return json.dumps(
        {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}
    ).encode()


def _deep(depth: int) -> Any:
    tree: Any = {"field": "year", "op": "eq", "value": 1}
    for _ in range(depth):
        tree = {"not": tree}
    return tree


def _frames() -> list[tuple[str, bytes, Expect]]:
    nested = (
        b'{"jsonrpc":"2.0","id":103,"method":"tools/call","params":{"name":"retrieve",'
        b'"arguments":{"query":"x","filter":' + b'{"not":' * 5000 + b"{}" + b"}" * 5000 + b"}}}"
    )
    return [
        ("not JSON", b"{not json", "error"),
        ("truncated", b'{"jsonrpc":"2.0","id":100,"method":"tools/li', "error"),
        ("empty batch", b"[]", "error"),
        ("jsonrpc 1.0", b'{"jsonrpc":"1.0","id":101,"method":"tools/list"}', "error"),
        ("no method", b'{"jsonrpc":"2.0","id":102}', "error"),
        ("boolean id", b'{"jsonrpc":"2.0","id":true,"method":"tools/list"}', "error"),
        ("nested 5,000 deep", nested, "error"),
        ("9 MB frame", _call(104, "retrieve", {"query": "a" * 9_000_000}), "error"),
        ("unknown method", b'{"jsonrpc":"2.0","id":105,"method":"no/such"}', "error"),
        ("unknown tool", _call(106, "drop_tables", {}), "error"),
        ("k as a string", _call(107, "retrieve", {"query": "x", "k": "ten"}), "tool-error"),
        ("negative k", _call(108, "retrieve", {"query": "x", "k": -1}), "tool-error"),
        ("absurd k", _call(109, "retrieve", {"query": "x", "k": 10**12}), "answer"),
        ("filter as a string", _call(110, "retrieve", {"query": "x", "filter": "y"}), "tool-error"),
        (
            "filter 100 deep",
            _call(111, "retrieve", {"query": "x", "filter": _deep(100)}),
            "tool-error",
        ),
        ("arguments as a list", _call(112, "retrieve", [1, 2]), "error"),
        ("numeric query", _call(113, "retrieve", {"query": 12345}), "tool-error"),
        ("500 KB query", _call(114, "retrieve", {"query": "fusion " * 75_000}), "answer"),
        ("no query", _call(115, "retrieve", {"k": 3}), "tool-error"),
        (
            "forged cursor",
            _call(116, "retrieve", {"query": "x", "cursor": "Zm9yZ2Vk"}),
            "tool-error",
        ),
        ("tools/call, no params", b'{"jsonrpc":"2.0","id":117,"method":"tools/call"}', "error"),
        ("tool name a number", _call(118, 7, {}), "error"),
    ]


def _writes() -> list[tuple[str, bytes, Expect]]:
    documents = {"documents": [{"id": "w", "text": "a write"}]}
    return [
        ("index_add, read-only", _call(120, "index_add", documents), "tool-error"),
        ("index_delete, read-only", _call(121, "index_delete", {"ids": ["w"]}), "tool-error"),
    ]


# --- transports ---


class _Stdio:
    """Raw NDJSON over the bridge's stdin/stdout."""

    def __init__(self, command: list[str]) -> None:
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        self.replies: queue.Queue[dict[str, Any]] = queue.Queue()
        self._lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            try:
                self.replies.put(json.loads(line))
            except ValueError:
                self.replies.put({"unparseable": line[:80].decode(errors="replace")})

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def send(self, frame: bytes) -> None:
        assert self.process.stdin is not None
        with self._lock:
            self.process.stdin.write(frame + b"\n")
            self.process.stdin.flush()

    def exchange(self, frame: bytes) -> list[dict[str, Any]]:
        """Send ``frame``; the replies that came back before the next quiet moment."""
        self.send(frame)
        try:
            replies = [self.replies.get(timeout=_REPLY_TIMEOUT)]
        except queue.Empty:
            return []
        while True:  # a second answer to the same frame would come right behind
            try:
                replies.append(self.replies.get(timeout=0.2))
            except queue.Empty:
                return replies

    def close(self) -> None:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.close()
        try:
            self.process.wait(20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)
        self.process.stdout.close()


class _Http:
    """Raw POSTs to the bridge's Streamable HTTP endpoint (JSON or SSE answers)."""

    def __init__(self, command: list[str]) -> None:
        import httpx

        self.process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        self.url = _announced(self.process)
        self.http = httpx.Client(timeout=_REPLY_TIMEOUT)
        self.headers = {
            "accept": "application/json, text/event-stream",
            "content-type": "application/json",
        }

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def send(self, frame: bytes) -> None:
        self.exchange(frame)

    def exchange(self, frame: bytes) -> list[dict[str, Any]]:
        import httpx

        try:
            response = self.http.post(self.url, content=frame, headers=self.headers)
        except httpx.HTTPError:
            return []
        if "mcp-session-id" in response.headers:
            self.headers["mcp-session-id"] = response.headers["mcp-session-id"]
            self.headers["mcp-protocol-version"] = _PROTOCOL
        if response.status_code == 202:
            return [{"accepted": True}]
        kind = response.headers.get("content-type", "")
        if "event-stream" in kind:
            events = [line[5:] for line in response.text.splitlines() if line.startswith("data:")]
            return [json.loads(event) for event in events if event.strip()]
        try:
            body = response.json()
        except ValueError:
            body = None
        if isinstance(body, dict):
            return [body]
        status = {"http": response.status_code, "body": response.text[:200]}
        return [{"error": {"code": response.status_code, "message": status["body"]}}]

    def close(self) -> None:
        self.http.close()
        self.process.terminate()
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)
        assert self.process.stderr is not None
        self.process.stderr.close()


def _announced(process: subprocess.Popen[bytes], timeout: float = 90.0) -> str:
    assert process.stderr is not None
    fd, buffer, deadline = process.stderr.fileno(), b"", time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        chunk = os.read(fd, 4096) if ready else b""
        if ready and not chunk:
            raise EOFError(f"the bridge exited: {buffer.decode(errors='replace')}")
        buffer += chunk
        match = re.search(rb"Streamable HTTP\) on (\S+)", buffer)
        if match:
            threading.Thread(target=process.stderr.read, daemon=True).start()  # keep draining
            return match.group(1).decode()
    raise TimeoutError("the bridge announced no URL")


# --- the campaign ---


def _initialize(transport: Any) -> None:
    hello = {
        "jsonrpc": "2.0",
        "id": "hello",
        "method": "initialize",
        "params": {
            "protocolVersion": _PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": "rcpkit-bench-mcp", "version": "1"},
        },
    }
    (reply, *_) = transport.exchange(json.dumps(hello).encode()) or [{}]
    if "result" not in reply:
        raise RuntimeError(f"the bridge refused initialize: {reply}")
    transport.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')


def _judge(tally: Tally, where: str, name: str, expect: Expect, replies: list[Any]) -> None:
    tally.requests += 1
    what = f"{where}: {name}"
    if not replies:
        tally.miss("hangs", f"{what}: no answer in {_REPLY_TIMEOUT:g} s")
        return
    if len(replies) > 1:
        tally.miss("doubled", f"{what}: {len(replies)} answers")
    reply = replies[0]
    error = reply.get("error") if isinstance(reply, dict) else None
    result = reply.get("result") if isinstance(reply, dict) else None
    if isinstance(error, dict):
        if error.get("code") == -32603:
            tally.miss("internal", f"{what}: -32603 {error.get('message')}")
        elif expect != "error" or _vague(error.get("message")):
            tally.miss("unclear", f"{what}: expected {expect}, got error {error}")
        return
    if not isinstance(result, dict):
        tally.miss("unclear", f"{what}: neither result nor error: {str(reply)[:80]}")
        return
    failed = bool(result.get("isError"))
    text = " ".join(str(block.get("text", "")) for block in result.get("content") or [])
    if failed and "-32603" in text:
        tally.miss("internal", f"{what}: {text[:100]}")
    elif expect == "error" or (expect == "tool-error" and not failed):
        tally.miss("unclear", f"{what}: expected {expect}, got {text[:80]!r}")
    elif failed and not text.strip():
        tally.miss("unclear", f"{what}: a tool error with no text")


def _vague(message: Any) -> bool:
    return str(message or "").strip().lower() in {"", *_GENERIC}


def _still_serving(tally: Tally, where: str, transport: Any, id: int) -> None:
    replies = transport.exchange(_call(id, "retrieve", {"query": "fusion", "k": 2}))
    if not transport.alive:
        tally.miss("crashes", f"{where}: the bridge exited")
    elif not replies or "result" not in replies[0]:
        tally.miss("hangs", f"{where}: no answer to an ordinary call afterwards")


def _storm(tally: Tally, where: str, transport: Any, count: int, first_id: int) -> None:
    """``count`` calls in flight, each cancelled at once; none may be answered twice."""
    ids = list(range(first_id, first_id + count))

    def one(id: int) -> list[dict[str, Any]]:
        cancel = {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": id, "reason": "storm"},
        }
        if isinstance(transport, _Http):
            with ThreadPoolExecutor(2) as pool:
                answer = pool.submit(transport.exchange, _call(id, "retrieve", {"query": "fusion"}))
                time.sleep(0.001 * (id % 5))  # the cancel lands at different moments
                transport.send(json.dumps(cancel).encode())
                return answer.result()
        transport.send(_call(id, "retrieve", {"query": "fusion"}))
        transport.send(json.dumps(cancel).encode())
        return []

    with ThreadPoolExecutor(8) as pool:
        answers: dict[Any, list[dict[str, Any]]] = dict(zip(ids, pool.map(one, ids), strict=True))
    if isinstance(transport, _Stdio):
        deadline = time.monotonic() + _REPLY_TIMEOUT / 3
        while time.monotonic() < deadline:
            try:
                reply = transport.replies.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                break
            answers.setdefault(reply.get("id"), []).append(reply)
    for id in ids:
        tally.requests += 1
        got = [reply for reply in answers.get(id, []) if reply.get("id") == id]
        if len(got) > 1:
            tally.miss("doubled", f"{where}: cancelled call {id} answered {len(got)} times")


def _attack(tally: Tally, where: str, transport: Any, scale: Scale, cases: Any) -> None:
    _initialize(transport)
    for _ in range(_REPEATS[scale]):
        for name, frame, expect in cases:
            _judge(tally, where, name, expect, transport.exchange(frame))
            if not transport.alive:
                tally.miss("crashes", f"{where}: the bridge exited after {name}")
                return
    _storm(tally, where, transport, _STORM[scale], 1000)
    _still_serving(tally, where, transport, 5000)


def _bridge(index: Path, *extra: str) -> list[str]:
    command = [sys.executable, "-m", "rcpkit", "mcp", "--index", str(index)]
    return [*command, "--embedder", "hashing:64", *extra]


def _seed(index: Path) -> None:
    transport = _Stdio(_bridge(index, "--writes"))
    try:
        _initialize(transport)
        documents = [{"id": f"n{n}", "text": f"rank fusion note {n}"} for n in range(12)]
        transport.exchange(_call(1, "index_add", {"documents": documents}))
    finally:
        transport.close()


def campaign(scale: Scale) -> Tally:
    tally = Tally()
    with tempfile.TemporaryDirectory(prefix="rcpkit-bench-mcp-") as folder:
        index = Path(folder) / "index"
        _seed(index)
        legs: list[tuple[str, Callable[[], Any], Any]] = [
            ("stdio", lambda: _Stdio(_bridge(index, "--writes")), _frames()),
            (
                "http",
                lambda: _Http(_bridge(index, "--writes", "--http", "127.0.0.1:0")),
                _frames(),
            ),
            ("stdio read-only (the default)", lambda: _Stdio(_bridge(index)), _writes()),
            (
                "http read-only",
                lambda: _Http(_bridge(index, "--read-only", "--http", "127.0.0.1:0")),
                _writes(),
            ),
        ]
        for where, start, cases in legs:
            with _running(start) as transport:
                _attack(tally, where, transport, scale, cases)
    return tally


@contextmanager
def _running(start: Callable[[], Any]) -> Iterator[Any]:
    transport = start()
    try:
        yield transport
    finally:
        transport.close()


def run(scale: Scale = "full") -> list[Figure]:
    tally = campaign(scale)
    for note in tally.notes:
        print(f"rcpkit bench mcp: {note}", file=sys.stderr)
    return figures(tally)


def figures(tally: Tally) -> list[Figure]:
    failures = tally.crashes + tally.hangs + tally.internal + tally.unclear + tally.doubled
    counts = f"{tally.crashes}/{tally.hangs}/{tally.internal}/{tally.unclear}/{tally.doubled}"
    return [
        Figure(
            "mcp",
            "stdio + Streamable HTTP: malformed frames, bad tool arguments, "
            "read-only writes, cancel storms: requests",
            tally.requests,
            "requests",
        ),
        Figure(
            "mcp",
            "crashes, hangs, -32603, unclear errors, double answers",
            failures,
            "failures",
            higher_is_better=False,
            note=f"{counts}; " + ("; ".join(tally.notes[:3]) or "each answered once, clearly"),
        ),
    ]
