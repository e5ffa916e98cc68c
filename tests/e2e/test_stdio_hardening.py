"""Defects a hostile client found (issue 13), each pinned through the real CLI over real pipes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from rcpkit.engine.ingest.images import image_ocr_available

INIT = {"protocolVersion": 1, "client": {"name": "t", "version": "1"}}


DEEP = "@DEEP@"


def _nested(depth: int) -> str:
    """JSON text nesting lists and objects ``depth`` levels (too deep for json.dumps)."""
    opening = "".join('{"x":' if level % 2 else "[" for level in range(depth))
    closing = "".join("}" if level % 2 else "]" for level in reversed(range(depth)))
    return opening + "1" + closing


def _request(server: Any, id: int, method: str, params: Any, deep: str) -> Any:
    """A request whose ``DEEP`` placeholder is replaced by the deep JSON text."""
    message = {"jsonrpc": "2.0", "id": id, "method": method, "params": params}
    server.write(json.dumps(message).replace(json.dumps(DEEP), deep).encode() + b"\n")
    return server.recv()


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"query": "test", "k": 10, "candidateK": 2}, "candidateK"),
        ({"query": "test", "k": 3, "candidateK": 2, "strict": False}, "candidateK"),
    ],
)
def test_a_retrieve_breaking_the_funnel_is_invalid_params_over_stdio(
    spawn: Any, params: dict[str, Any], field: str
) -> None:
    server = spawn("--sample")
    assert "result" in server.request(1, "initialize", INIT)
    error = server.request(2, "retrieve", params)["error"]
    assert (error["code"], error["data"]["field"]) == (-32602, field)


@pytest.mark.parametrize("depth", [65, 500, 900])
def test_deep_nesting_in_any_params_field_is_invalid_params_never_internal(
    spawn: Any, depth: int
) -> None:
    server = spawn("--sample")
    deep = _nested(depth)
    # Before initialize (lifecycle methods) and after (gated methods).
    assert _request(server, 1, "ping", {"nonce": DEEP}, deep)["error"]["code"] == -32602
    assert "result" in server.request(2, "initialize", INIT)
    probes = [
        ("retrieve", {"query": "q", "filter": DEEP}, "filter"),
        ("retrieve", {"query": DEEP}, "query"),
        ("retrieve", {"query": "q", "_meta": {"trace": DEEP}}, "_meta"),
        ("index/add", {"documents": [{"text": "t", "meta": {"m": DEEP}}]}, "documents"),
        ("x-acme/thing", {"p": DEEP}, None),
    ]
    for id, (method, params, field) in enumerate(probes, start=3):
        error = _request(server, id, method, params, deep)["error"]
        if field is None:
            assert error["code"] == -32004  # unknown method still wins (§12)
            continue
        assert (error["code"], error["data"]["field"]) == (-32602, field), (method, error)
    assert server.request(99, "ping")["result"] == {}


def test_nesting_past_what_the_decoder_holds_is_payload_too_large_not_a_parse_error(
    spawn: Any,
) -> None:
    server = spawn("--sample")
    reply = _request(server, 1, "ping", {"nonce": DEEP}, _nested(5000))
    assert (reply["id"], reply["error"]["code"]) == (None, -32013)
    assert server.request(2, "ping")["result"] == {}


def test_deep_nesting_inside_a_batch_member_is_answered_per_member(spawn: Any) -> None:
    server = spawn("--sample")
    batch = [
        {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"nonce": DEEP}},
        {"jsonrpc": "2.0", "id": 2, "method": "ping"},
    ]
    server.write(json.dumps(batch).replace(json.dumps(DEEP), _nested(900)).encode() + b"\n")
    answers = {answer["id"]: answer for answer in server.recv()}
    assert answers[1]["error"]["code"] == -32602
    assert answers[2]["result"] == {}


TEXT_URI = {"type": "text", "text": "rank fusion", "uri": "https://example.com/a.txt"}
IMAGE = {"type": "image", "mimeType": "image/png", "data": "AAAA"}
IMAGE_URI = {"type": "image", "mimeType": "image/png", "uri": "file:///etc/passwd"}
OCR = image_ocr_available()
NO_IMAGE = (-32005, "option", "modality")
RERANK_IMAGE = (-32602, "field", "passages[0].data") if OCR else NO_IMAGE

# (method, params, code, data key, data value): every Content-taking field (§4.8).
CONTENT_PROBES = [
    ("retrieve", {"query": TEXT_URI}, -32602, "field", "query"),
    ("retrieve", {"query": [{"type": "text", "text": "x"}, TEXT_URI]}, -32602, "field", "query[1]"),
    # With the ocr extra image blocks are read (§4.8): "AAAA" is then no image (-32602).
    ("retrieve", {"query": IMAGE}, *((-32602, "field", "query.data") if OCR else NO_IMAGE)),
    ("embed", {"inputs": ["a", TEXT_URI]}, -32602, "field", "inputs[1]"),
    ("embed", {"texts": [TEXT_URI]}, -32602, "field", "texts[0]"),
    ("embed", {"inputs": [IMAGE_URI]}, *((-32602, "field", "inputs[0]") if OCR else NO_IMAGE)),
    ("embed/multi", {"inputs": [IMAGE]}, -32005, "option", "modality"),  # not read there
    ("embed/multi", {"inputs": [TEXT_URI]}, -32602, "field", "inputs[0]"),
    ("embed/multi", {"texts": [TEXT_URI]}, -32602, "field", "texts[0]"),
    ("rerank", {"query": "q", "passages": ["a", TEXT_URI]}, -32602, "field", "passages[1]"),
    ("rerank", {"query": TEXT_URI, "passages": ["a"]}, -32602, "field", "query"),
    ("rerank", {"query": "q", "documents": [TEXT_URI]}, -32602, "field", "documents[0]"),
    ("rerank", {"query": "q", "passages": [IMAGE]}, *RERANK_IMAGE),
    ("query/transform", {"query": IMAGE, "method": "rewrite"}, -32005, "option", "modality"),
    ("query/transform", {"query": TEXT_URI, "method": "rewrite"}, -32602, "field", "query"),
    ("memory/recall", {"query": IMAGE}, -32005, "option", "modality"),
    ("memory/recall", {"query": TEXT_URI}, -32602, "field", "query"),
]


def test_every_content_field_refuses_a_uri_and_an_unadvertised_block(
    spawn: Any, tmp_path: Any
) -> None:
    index = str(tmp_path / "idx")
    config = tmp_path / "rcpkit.toml"  # MaxSim is opt-in: advertise rerank to probe its fields
    config.write_text("[engine]\ncolbert_rerank = true\n")
    server = spawn(
        "--engine", "index", "--index", index, "--embedder", "hashing:64", "--create",
        "--config", str(config),
    )  # fmt: skip
    assert "result" in server.request(1, "initialize", INIT)
    for id, (method, params, code, key, value) in enumerate(CONTENT_PROBES, start=2):
        reply = server.request(id, method, params)
        assert "error" in reply, (method, params, reply)
        error = reply["error"]
        assert (error["code"], error["data"][key]) == (code, value), (method, params, error)
    # A document's uri is provenance (a citation), not content to fetch: still accepted.
    added = server.request(
        90, "index/add", {"documents": [{"id": "d", "text": "t", "uri": "https://x/d"}]}
    )
    assert added["result"]["ids"] == ["d"]


HUGE = "s" * (1 << 20)

# (method, params, field): every client-chosen string the server keeps is bounded (§15.5).
KEPT_STRINGS = [
    ("retrieve", {"query": "q", "sessionId": HUGE}, "sessionId"),
    ("retrieve", {"query": "q", "cursor": HUGE}, "cursor"),
    ("retrieve", {"query": "q", "_meta": {"progressToken": HUGE}}, "_meta.progressToken"),
    ("feedback", {"signals": [{"hitId": "a", "used": True}], "sessionId": HUGE}, "sessionId"),
    ("feedback", {"signals": [{"hitId": HUGE, "used": True}]}, "signals[0].hitId"),
    ("memory/build", {"documents": [{"text": "t"}], "memoryId": HUGE}, "memoryId"),
    ("memory/recall", {"query": "q", "memoryId": HUGE}, "memoryId"),
    ("index/add", {"documents": [{"id": HUGE, "text": "t"}]}, "documents[0].id"),
    (
        "index/add",
        {"documents": [{"text": "t"}], "_meta": {"idempotencyKey": HUGE}},
        "_meta.idempotencyKey",
    ),
    ("index/delete", {"ids": [HUGE]}, "ids[0]"),
]


def test_a_huge_client_chosen_string_the_server_would_keep_is_invalid_params(
    spawn: Any, tmp_path: Any
) -> None:
    index = str(tmp_path / "idx")
    server = spawn("--engine", "index", "--index", index, "--embedder", "hashing:64", "--create")
    assert "result" in server.request(1, "initialize", INIT)
    for id, (method, params, field) in enumerate(KEPT_STRINGS, start=2):
        reply = server.request(id, method, params)
        assert "error" in reply, (method, field, str(reply)[:200])
        error = reply["error"]
        assert (error["code"], error["data"]["field"]) == (-32602, field), (method, error)
        assert len(error["message"]) < 200  # the value is not echoed back
    ok = server.request(50, "retrieve", {"query": "q", "sessionId": "s" * 256})
    assert "result" in ok


def _rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        line = next(line for line in status if line.startswith("VmRSS:"))
    return int(line.split()[1])


def test_a_client_that_never_reads_stdout_cannot_grow_the_server_without_bound(
    spawn: Any,
) -> None:
    import os
    import threading
    import time

    server = spawn()
    assert server.request(0, "ping")["result"] == {}
    pid = server.process.pid
    before = _rss_kib(pid)
    frames = b"".join(
        b'{"jsonrpc":"2.0","id":%d,"method":"ping","params":{"nonce":"%s"}}\n' % (i, b"x" * 1000)
        for i in range(1, 50_001)
    )  # 50 MB in, 50 MB of answers out
    stdin = server.process.stdin
    assert stdin is not None
    fd = stdin.fileno()
    os.set_blocking(fd, False)
    written, deadline = 0, time.monotonic() + 3.0
    while written < len(frames) and time.monotonic() < deadline:
        try:
            written += os.write(fd, frames[written : written + 65536])
        except BlockingIOError:
            time.sleep(0.01)
    grown_mib = (_rss_kib(pid) - before) / 1024
    # Back-pressure: the server stopped reading once its output backed up.
    assert written < 8 * 1024 * 1024, f"the server read {written} bytes nobody read answers to"
    assert grown_mib < 40, f"RSS grew {grown_mib:.0f} MiB"
    # And nothing was lost: finish the frames, then every id is answered exactly once.
    os.set_blocking(fd, True)
    end = frames.index(b"\n", written) + 1 if written else 0
    sent = frames[:end].count(b"\n")
    writer = threading.Thread(target=lambda: (stdin.write(frames[written:end]), stdin.close()))
    writer.start()
    ids = [server.recv(timeout=30)["id"] for _ in range(sent)]
    writer.join(10)
    assert sorted(ids) == list(range(1, sent + 1))


def test_end_of_input_flushes_every_answer_before_the_server_exits(spawn: Any) -> None:
    import threading

    server = spawn()
    count = 3000
    frames = b"".join(
        b'{"jsonrpc":"2.0","id":%d,"method":"ping","params":{"nonce":"%s"}}\n' % (i, b"y" * 1000)
        for i in range(count)
    )
    stdin = server.process.stdin
    assert stdin is not None
    writer = threading.Thread(target=lambda: (stdin.write(frames), stdin.close()))
    writer.start()
    ids = [server.recv(timeout=30)["id"] for _ in range(count)]  # EOFError if one is lost
    writer.join(10)
    assert sorted(ids) == list(range(count))
    assert server.wait() == 0


def _frames_until_answer(server: Any, id: int) -> list[Any]:
    frames = [server.recv()]
    while frames[-1].get("id") != id:
        frames.append(server.recv())
    return frames


def _logs(frames: list[Any]) -> list[dict[str, Any]]:
    return [f["params"] for f in frames if f.get("method") == "notifications/log"]


def test_logs_travel_in_band_on_stdout_at_the_level_the_client_asked_for(
    spawn: Any, tmp_path: Any
) -> None:
    index = str(tmp_path / "idx")
    server = spawn("--engine", "index", "--index", index, "--embedder", "hashing:64", "--create")
    hello = server.request(
        1, "initialize", {**INIT, "capabilities": {"log": {}}, "_meta": {"logLevel": "debug"}}
    )
    assert "log" in hello["result"]["capabilities"]
    server.send(
        {"jsonrpc": "2.0", "id": 2, "method": "retrieve", "params": {"query": "q", "k": 500}}
    )
    logs = _logs(_frames_until_answer(server, 2))
    assert {
        "level": "notice",
        "message": "k clamped to maxK 200",
        "logger": "rcpkit.server",
    } in logs
    assert any(log["logger"] == "pipeline" and log["level"] == "debug" for log in logs)
    assert logs[-1]["message"].startswith("retrieve answered in ")


def test_no_logs_without_the_client_capability_and_none_below_its_level(
    spawn: Any, tmp_path: Any
) -> None:
    index = str(tmp_path / "idx")
    quiet = spawn("--engine", "index", "--index", index, "--embedder", "hashing:64", "--create")
    assert "result" in quiet.request(1, "initialize", INIT)
    quiet.send(
        {"jsonrpc": "2.0", "id": 2, "method": "retrieve", "params": {"query": "q", "k": 500}}
    )
    assert _logs(_frames_until_answer(quiet, 2)) == []
    notice = spawn("--engine", "index", "--index", index, "--embedder", "hashing:64", "--create")
    params = {**INIT, "capabilities": {"log": {}}, "_meta": {"logLevel": "notice"}}
    assert "result" in notice.request(1, "initialize", params)
    notice.send(
        {"jsonrpc": "2.0", "id": 2, "method": "retrieve", "params": {"query": "q", "k": 500}}
    )
    logs = _logs(_frames_until_answer(notice, 2))
    # The clamp and, on this empty index, "no chunk contains the query's words" are
    # notices; nothing below the level the client asked for (§17.1) comes through.
    assert {log["level"] for log in logs} == {"notice"}
    assert "k clamped to maxK 200" in [log["message"] for log in logs]


def test_the_keyword_engine_advertises_log_too(spawn: Any) -> None:
    server = spawn("--sample")
    hello = server.request(1, "initialize", {**INIT, "capabilities": {"log": {}}})
    assert "log" in hello["result"]["capabilities"]
    server.send(
        {"jsonrpc": "2.0", "id": 2, "method": "retrieve", "params": {"query": "x", "k": 500}}
    )
    assert [log["level"] for log in _logs(_frames_until_answer(server, 2))] == ["notice"]
