"""What the bridge answers itself, before the MCP SDK sees a stdio frame.

The SDK's stdio reader turns a line it cannot parse into an exception nobody
answers, so a host waiting on that call waits out its own timeout (issue 35:
a frame nested 5,000 levels, a 21 MB query). Over HTTP the same inputs get
413 or 400 at once. Here every such line gets one JSON-RPC error at once,
carrying the request's id when it can be read (a reply with the wrong id would
be worse than ``null``, so only a top-level ``"id"`` counts):

* longer than ``max_bytes``: -32600, naming the size and the limit;
* not JSON, or nested past ``rcpkit.codec.MAX_DEPTH``: -32700;
* JSON but not one JSON-RPC message the SDK accepts (a batch, no ``method``):
  -32600;
* a ``tools/call`` without a string ``name`` (or ``arguments`` not an object):
  -32602 naming the field (the SDK says only "Invalid request parameters").
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import mcp_types as types
import pydantic

from rcpkit import codec

__all__ = ["MAX_FRAME_BYTES", "Refusal", "screen"]

# What a tool call may weigh on the wire; the engine behind takes 16 MiB a line.
MAX_FRAME_BYTES = 8 * 1024 * 1024
_HEAD = 64 * 1024  # how far into a frame a top-level id is looked for


@dataclass(frozen=True, slots=True)
class Refusal:
    id: str | int | None
    code: int
    message: str

    def reply(self) -> types.JSONRPCError:
        error = types.ErrorData(code=self.code, message=self.message)
        return types.JSONRPCError(jsonrpc="2.0", id=self.id, error=error)


def screen(line: bytes | str, max_bytes: int = MAX_FRAME_BYTES) -> Refusal | None:
    """None when the SDK can take ``line``; else the error it must be answered with."""
    data = line.encode("utf-8", "replace") if isinstance(line, str) else line
    if not data.strip():
        return None  # a blank line is no frame
    if len(data) > max_bytes:
        message = f"request of {len(data)} bytes exceeds the bridge's limit of {max_bytes} bytes"
        return Refusal(_id_of(data), -32600, message)
    frame = codec.decode(data)
    if isinstance(frame, codec.Invalid):
        code = -32600 if frame.error.code == -32600 else -32700
        return Refusal(_usable(frame.id) or _id_of(data), code, frame.error.message)
    if isinstance(frame, codec.Batch):
        return Refusal(None, -32600, "JSON-RPC batches are not part of MCP")
    try:
        parsed = types.jsonrpc_message_adapter.validate_json(data, by_name=False)
    except pydantic.ValidationError as error:
        first: Any = error.errors()[0] if error.errors() else {}
        id = _usable(getattr(frame, "id", None)) or _id_of(data)
        if first.get("type") == "json_invalid":  # nested past what the SDK parses
            return Refusal(id, -32700, f"parse error: {first.get('msg', 'invalid JSON')}")
        where = ".".join(str(part) for part in first.get("loc", ())[1:]) or "message"
        message = f"not a JSON-RPC message MCP accepts ({where}: {first.get('msg', 'invalid')})"
        return Refusal(id, -32600, message)
    if isinstance(parsed, types.JSONRPCRequest) and parsed.method == "tools/call":
        return _tool_call(parsed)
    return None


def _tool_call(request: types.JSONRPCRequest) -> Refusal | None:
    """``tools/call`` params the SDK would refuse as just "Invalid request parameters"."""
    try:
        types.CallToolRequestParams.model_validate(request.params or {})
    except pydantic.ValidationError as error:
        first: Any = error.errors()[0] if error.errors() else {}
        where = ".".join(str(part) for part in first.get("loc", ())) or "params"
        detail = f"tools/call params.{where}: {first.get('msg', 'invalid')}"
        return Refusal(request.id, -32602, detail)
    return None


def _usable(id: Any) -> str | int | None:
    return id if isinstance(id, str | int) and not isinstance(id, bool) else None


def _id_of(data: bytes) -> str | int | None:
    """The frame's top-level ``id``: parsed when the frame parses, else read from its head."""
    try:
        value = json.loads(data)
    except (ValueError, RecursionError):
        return _head_id(data[:_HEAD].decode("utf-8", "replace"))
    return _usable(value.get("id")) if isinstance(value, dict) else None


def _head_id(text: str) -> str | int | None:
    """A top-level ``"id": <number or string>`` in the first bytes of a broken frame."""
    depth, index = 0, 0
    while index < len(text):
        char = text[index]
        if char == '"':
            end = _string_end(text, index)
            if end < 0:
                return None
            if depth == 1 and text[index:end] == '"id"':
                found = _value_after(text, end)  # None: "id" was a value, not the key
                if found is not None:
                    return found
            index = end
            continue
        if char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
        index += 1
    return None


def _string_end(text: str, start: int) -> int:
    index = start + 1
    while index < len(text):
        if text[index] == "\\":
            index += 2
            continue
        if text[index] == '"':
            return index + 1
        index += 1
    return -1


def _value_after(text: str, end: int) -> str | int | None:
    rest = text[end:].lstrip()
    if not rest.startswith(":"):
        return None
    rest = rest[1:].lstrip()
    decoder = json.JSONDecoder()
    try:
        value, _ = decoder.raw_decode(rest[:256])
    except ValueError:
        return None
    return _usable(value)
