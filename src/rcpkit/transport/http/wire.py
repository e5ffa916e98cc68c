"""HTTP framing: the headers we read, the body under a limit, responses and SSE frames.

Everything here is bytes and ASGI messages; nothing knows an RCP method.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import msgspec
from starlette.types import Message, Receive, Send

from rcpkit import codec
from rcpkit.codec import Frame, Invalid
from rcpkit.protocol.errors import RCPError

__all__ = [
    "BodyTooLarge",
    "ClientGone",
    "Reply",
    "RequestHeaders",
    "decode_body",
    "lifespan",
    "read_body",
    "send_json",
    "send_reply",
    "sse_frame",
    "to_compact",
    "wait_disconnect",
]

JSON = b"application/json"
EVENT_STREAM = b"text/event-stream"
SESSION_HEADER = b"rcp-session"


class RequestHeaders:
    """The request headers the transport acts on (names arrive lower-cased)."""

    # Class-level defaults: a request sets only the headers it carries.
    authorization: bytes | None = None
    api_key: bytes | None = None
    session: str | None = None
    accept: bytes = b""
    content_type: bytes = b""
    content_length: int | None = None
    origin: str | None = None
    traceparent: bytes | None = None  # W3C Trace Context: mapped to _meta.traceId
    ambiguous = False  # a credential header was sent more than once

    @classmethod
    def of(cls, raw: Iterable[tuple[bytes, bytes]]) -> RequestHeaders:
        headers = cls()
        for name, value in raw:
            if name == b"content-type":
                headers.content_type = value.lower()
            elif name == b"content-length":
                headers.content_length = int(value) if value.strip().isdigit() else -1
            elif name == b"authorization":
                # §15.6: two credentials are no credential (never "the last one wins").
                headers.ambiguous = headers.ambiguous or headers.authorization is not None
                headers.authorization = value
            elif name == b"accept":
                headers.accept = value.lower()
            elif name == SESSION_HEADER:
                headers.session = value.decode("latin-1").strip()
            elif name == b"x-api-key":
                headers.ambiguous = headers.ambiguous or headers.api_key is not None
                headers.api_key = value.strip()
            elif name == b"origin":
                headers.origin = value.decode("latin-1")
            elif name == b"traceparent":
                headers.traceparent = value
        return headers

    @property
    def is_json(self) -> bool:
        if self.content_type == JSON:
            return True
        media_type = self.content_type.partition(b";")[0].strip()
        return media_type == JSON or (
            media_type.startswith(b"application/") and media_type.endswith(b"+json")
        )

    @property
    def wants_events(self) -> bool:
        return EVENT_STREAM in self.accept


@dataclass(slots=True)
class Reply:
    """One buffered HTTP response."""

    status: int
    body: bytes = b""
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)

    @classmethod
    def error(
        cls, status: int, error: RCPError, headers: list[tuple[bytes, bytes]] | None = None
    ) -> Reply:
        """A transport-level refusal; the body still carries the JSON-RPC error."""
        return cls(status, codec.encode_error(None, error), headers or [])


async def send_reply(send: Send, reply: Reply) -> None:
    if reply.status == 204:
        await send({"type": "http.response.start", "status": 204, "headers": reply.headers})
        await send({"type": "http.response.body", "body": b""})
        return
    await send_json(send, reply.status, reply.body, reply.headers)


async def send_json(
    send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    """One JSON response (head and body leave together: see ``protocol``)."""
    head = [(b"content-type", JSON), (b"content-length", b"%d" % len(body))]
    if headers:
        head.extend(headers)
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": body})


def sse_frame(data: bytes) -> bytes:
    """§5.2: one ``data:`` line with a compact JSON object, then a blank line.

    The codec's output has no raw newline (JSON escapes them), so one line it is.
    """
    return b"data: " + data + b"\n\n"


# --- the body ---


class BodyTooLarge(Exception):
    pass


class ClientGone(Exception):
    pass


async def read_body(receive: Receive, limit: int, declared: int | None) -> bytes:
    """Read the body, refusing before reading past ``limit`` bytes (§15.5)."""
    if declared is not None and declared > limit:
        raise BodyTooLarge
    message = await receive()
    if message["type"] == "http.request" and not message.get("more_body", False):
        body: bytes = message.get("body", b"")  # the usual case: one message
        if len(body) > limit:
            raise BodyTooLarge
        return body
    return await _read_rest(receive, limit, message)


async def _read_rest(receive: Receive, limit: int, message: Message) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        if message["type"] == "http.disconnect":
            raise ClientGone
        chunk: bytes = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)
        message = await receive()


async def wait_disconnect(receive: Receive) -> None:
    """Resolve once the client has gone (the request body was already read)."""
    while (await receive())["type"] != "http.disconnect":
        pass


async def lifespan(receive: Receive, send: Send, shutdown: Callable[[], Awaitable[None]]) -> None:
    """The ASGI lifespan: ready at once; on shutdown run ``shutdown``, then say it is done."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await shutdown()
            await send({"type": "lifespan.shutdown.complete"})
            return


# --- the compact envelope (§5.3) ---

_plain = msgspec.json.Decoder()
_encoder = msgspec.json.Encoder()


def decode_body(body: bytes, path_method: str = "") -> tuple[Frame, bool]:
    """Decode a POST body; also accept the compact ``{method, params}`` envelope (§5.3),
    and, on a method path (``path_method``), that method's bare params.

    Returns the frame and whether it was an id-less compact request, whose
    answer goes back compact too (``{"result": …}`` or ``{"error": …}``): the
    HTTP exchange itself correlates it. A bare params object is such a request
    for the method the path names (issue 36: ``POST /rcp/retrieve`` with
    ``{"query": …}``); a body that is not JSON stays a parse error (-32700) and
    any other non-request value an invalid request (-32600).
    """
    if b'"jsonrpc"' in body:
        frame = codec.decode(body)
        # Bare params may hold the word in a value ({"query": "jsonrpc"}): look again.
        if not (path_method and isinstance(frame, Invalid)):
            return frame, False
    try:
        value: Any = _plain.decode(body)
    except (msgspec.DecodeError, RecursionError, UnicodeError):
        return codec.decode(body), False
    if not isinstance(value, dict) or "jsonrpc" in value:
        return codec.decode(body), False
    if not _is_envelope(value):
        if not path_method:
            return codec.decode(body), False
        value = {"method": path_method, "params": value}
    value = {"jsonrpc": "2.0", **value}
    compact = "id" not in value and not value["method"].startswith("notifications/")
    if compact:
        value["id"] = f"rcpkit-compact-{secrets.token_hex(8)}"
    return codec.classify(value), compact


def _is_envelope(value: dict[str, Any]) -> bool:
    """``{method, params}`` (and maybe ``id``), not the bare params of a method.

    ``rerank`` and ``query/transform`` params have a ``method`` field of their
    own, so a string ``method`` alone does not make an envelope: it takes a
    ``params`` member, or nothing but ``method`` and ``id``.
    """
    if not isinstance(value.get("method"), str):
        return False
    return "params" in value or set(value) <= {"method", "id"}


def to_compact(reply: bytes) -> bytes:
    """A JSON-RPC response without ``jsonrpc`` and the transport-assigned ``id``."""
    message = _plain.decode(reply)
    return _encoder.encode({key: message[key] for key in ("result", "error") if key in message})
