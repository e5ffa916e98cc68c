"""uvicorn's httptools protocol, hardened: bounded request heads, read deadlines, JSON refusals.

What uvicorn does not bound itself, this does before the app sees anything
(§15.5): the size and number of request headers (431), the time a request
head may take to arrive and the time its body may take (408). Requests the
HTTP parser rejects (a NUL in a header, a negative ``Content-Length``…) are
answered with a JSON-RPC error body, not plain text, so a client that reads
``error.code`` always has one (§5.2). None of it costs a well-formed request
that arrives in one read anything: the timers are armed only while a head
or body is still incomplete at the end of a read.

Writes are coalesced per loop turn: uvicorn writes a response's head as
soon as the app sends it and the body right after, so a small JSON answer
would cost two ``send`` calls and two TCP segments. Everything written in
one event-loop turn here leaves in one ``send`` instead (like the stdio
transport's coalescing); on loopback that is about a quarter of the CPU a
small call costs. An SSE frame still leaves in the turn it was produced.
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

import httptools
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from rcpkit import codec
from rcpkit.protocol.errors import ErrorCode, RCPError
from rcpkit.transport.http.config import HeadLimits

__all__ = ["CoalescingTransport", "HttpProtocol", "protocol_for"]


class CoalescingTransport(asyncio.Transport):
    """A transport whose writes within one loop turn become one write."""

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__()
        self._transport = transport
        self._loop = loop
        self._pending: list[bytes] = []

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not self._pending:
            self._loop.call_soon(self._flush)
        self._pending.append(bytes(data))

    def _flush(self) -> None:
        if not self._pending:
            return
        data = b"".join(self._pending)
        self._pending.clear()
        if not self._transport.is_closing():
            self._transport.write(data)

    def close(self) -> None:
        self._flush()  # a `Connection: close` answer is written, then closed
        self._transport.close()

    def abort(self) -> None:
        self._pending.clear()
        self._transport.abort()

    def is_closing(self) -> bool:
        return self._transport.is_closing()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self._transport.get_extra_info(name, default)

    def pause_reading(self) -> None:
        self._transport.pause_reading()

    def resume_reading(self) -> None:
        self._transport.resume_reading()

    def is_reading(self) -> bool:
        return self._transport.is_reading()

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self._transport.set_protocol(protocol)

    def get_protocol(self) -> asyncio.BaseProtocol:
        return self._transport.get_protocol()

    def get_write_buffer_size(self) -> int:
        return self._transport.get_write_buffer_size() + sum(map(len, self._pending))

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        self._transport.set_write_buffer_limits(high, low)

    def can_write_eof(self) -> bool:
        return self._transport.can_write_eof()

    def write_eof(self) -> None:
        self._flush()
        self._transport.write_eof()


class _Refused(Exception):
    """Raised from a parser callback: answer ``status`` with ``error``, then close."""

    def __init__(self, status: int, error: RCPError) -> None:
        super().__init__(error.message)
        self.status = status
        self.error = error


_MALFORMED = RCPError(ErrorCode.INVALID_REQUEST, "invalid request: malformed HTTP")
_HEAD_TOO_LARGE = RCPError(ErrorCode.INVALID_REQUEST, "request headers too large")
_TOO_MANY_HEADERS = RCPError(ErrorCode.INVALID_REQUEST, "too many request headers")
_HEAD_TOO_SLOW = RCPError(ErrorCode.TIMEOUT, "request headers not received in time")
_BODY_TOO_SLOW = RCPError(ErrorCode.TIMEOUT, "request body not received in time")


class HttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol over a :class:`CoalescingTransport`, with head limits."""

    limits: ClassVar[HeadLimits] = HeadLimits()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(CoalescingTransport(transport, self.loop))
        # Bytes read since the current request head began: httptools buffers a
        # header whole before its callback, so the head is bounded as it arrives.
        self._head_bytes = 0
        self._in_head = False  # a request has begun and its head is not complete
        self._in_body = False  # a head is complete and its body is not
        self._read_timer: asyncio.TimerHandle | None = None
        # An idle connection that never sends a request is closed like an idle
        # keep-alive one (uvicorn arms that timer only after a response).
        self.timeout_keep_alive_task = self.loop.call_later(
            self.timeout_keep_alive, self.timeout_keep_alive_handler
        )

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_read_timer()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        self._unset_keepalive_if_required()
        if not self._in_body:
            self._head_bytes += len(data)
        try:
            self.parser.feed_data(data)
            if self._in_head and self._head_bytes > self.limits.max_header_bytes:
                raise _Refused(431, _HEAD_TOO_LARGE)
        except _Refused as refused:
            self._refuse(refused.status, refused.error)
            return
        except httptools.HttpParserUpgrade:
            if self._should_upgrade():
                self.handle_websocket_upgrade()
            else:
                self._unsupported_upgrade_warning()
            return
        except httptools.HttpParserError as error:
            cause = error.__context__  # what a callback raised, if it was one of ours
            if isinstance(cause, _Refused):
                self._refuse(cause.status, cause.error)
            else:
                self._refuse(400, _MALFORMED)
            return
        if (self._in_head or self._in_body) and self._read_timer is None:
            # Only a request still incomplete after a read pays for a timer.
            timeout = self.limits.body_timeout if self._in_body else self.limits.header_timeout
            self._read_timer = self.loop.call_later(timeout, self._read_timed_out)

    def send_400_response(self, msg: str) -> None:
        self._refuse(400, _MALFORMED)

    # --- parser callbacks: count the head, track where the request is ---

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._in_head = True

    def on_headers_complete(self) -> None:
        if len(self.headers) > self.limits.max_headers:
            raise _Refused(431, _TOO_MANY_HEADERS)
        if self._head_bytes > self.limits.max_header_bytes and self._head_size() > (
            self.limits.max_header_bytes
        ):
            # This read held a whole head (and maybe more): measure the head itself.
            raise _Refused(431, _HEAD_TOO_LARGE)
        self._stop_read_timer()
        self._in_head = False
        self._in_body = True
        self._head_bytes = 0
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self._stop_read_timer()
        self._in_body = False
        super().on_message_complete()

    # --- refusals ---

    def _head_size(self) -> int:
        return len(self.url) + sum(len(name) + len(value) for name, value in self.headers)

    def _read_timed_out(self) -> None:
        self._read_timer = None
        if self.pipeline:  # reading is paused behind a pipelined request: not the client's doing
            timeout = self.limits.body_timeout
            self._read_timer = self.loop.call_later(timeout, self._read_timed_out)
            return
        error = _BODY_TOO_SLOW if self._in_body else _HEAD_TOO_SLOW
        self._refuse(408, error)

    def _stop_read_timer(self) -> None:
        if self._read_timer is not None:
            self._read_timer.cancel()
            self._read_timer = None

    def _refuse(self, status: int, error: RCPError) -> None:
        """Answer with a JSON-RPC error body (when no response has begun) and close."""
        self._stop_read_timer()
        self._in_head = self._in_body = False
        cycle = self.cycle
        if cycle is not None and not cycle.response_complete:
            # The app is still on this request: it sees a disconnect, not a body.
            cycle.disconnected = True
            cycle.message_event.set()
            if cycle.response_started:
                self.transport.close()
                return
        if self.transport.is_closing():
            return
        body = codec.encode_error(None, error)
        head = [STATUS_LINE[status]]
        for name, value in self.server_state.default_headers:
            head.extend([name, b": ", value, b"\r\n"])
        head.append(b"content-type: application/json\r\n")
        head.append(b"content-length: %d\r\nconnection: close\r\n\r\n" % len(body))
        self.transport.write(b"".join(head) + body)
        self.transport.close()


def protocol_for(limits: HeadLimits) -> type[HttpProtocol]:
    """:class:`HttpProtocol` enforcing ``limits`` (uvicorn instantiates the class itself)."""
    if limits == HttpProtocol.limits:
        return HttpProtocol
    return type("HttpProtocol", (HttpProtocol,), {"limits": limits})
