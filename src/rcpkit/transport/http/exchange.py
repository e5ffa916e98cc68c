"""One HTTP exchange: body → frame → the caller's session → a JSON reply or an SSE stream.

The dispatcher does the protocol work; this module only decides which
session a frame belongs to and how its answer travels (§5.2).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any, Literal

import msgspec
from starlette.types import Receive, Send

from rcpkit import codec
from rcpkit.codec import Batch, Frame, Invalid, Notification, Request, Response
from rcpkit.observe.trace import TRACE_KEY, trace_id_of, trace_id_of_traceparent
from rcpkit.protocol.errors import ErrorCode, RCPError
from rcpkit.server.dispatcher import Dispatcher
from rcpkit.server.runner import Runtime
from rcpkit.server.session import Immediate, Session
from rcpkit.transport.http.auth import Principal
from rcpkit.transport.http.sessions import HttpSession, SessionEntry, SessionStore
from rcpkit.transport.http.wire import (
    EVENT_STREAM,
    SESSION_HEADER,
    Reply,
    RequestHeaders,
    decode_body,
    send_json,
    send_reply,
    sse_frame,
    to_compact,
    wait_disconnect,
)

__all__ = ["Caller", "Exchanges"]

log = logging.getLogger("rcpkit.http")

_SSE_HEADERS = [
    (b"content-type", EVENT_STREAM),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),  # proxies must not buffer the stream
]


@dataclass(slots=True)
class Caller:
    """An admitted caller: who it is, and the key its limits are counted under."""

    principal: Principal
    key: str


@dataclass(slots=True)
class _Route:
    dispatcher: Dispatcher
    entry: SessionEntry | None = None  # the stored stateful session it runs on
    opening: HttpSession | None = None  # a session this exchange opens if it initializes
    headers: list[tuple[bytes, bytes]] | None = None  # extra response headers


class Exchanges:
    """Runs admitted exchanges against stateless or stateful sessions."""

    def __init__(self, runtime: Runtime, sessions: SessionStore | None) -> None:
        self._runtime = runtime
        self._server = runtime.server
        self._sessions = sessions
        self._stateless = Session(self._server, stateless=True)  # for ping and info only
        self._fixed: dict[str, bytes] = {}  # their encoded results for empty params
        # §5.2: SSE only when `streaming` is advertised (fixed from here on, §13.2).
        self._streaming = self._server.capabilities.streaming is not None

    async def run(
        self,
        path_method: str,
        headers: RequestHeaders,
        caller: Caller,
        body: bytes,
        receive: Receive,
        send: Send,
    ) -> None:
        frame, compact = decode_body(body, path_method)
        if headers.traceparent is not None:
            _adopt_traceparent(frame, headers.traceparent)
        route = _vet(frame, path_method, caller.principal) or self._route(frame, headers, caller)
        if isinstance(route, Reply):
            await send_reply(send, route)
            return
        try:
            if self._streams(frame, headers):
                assert isinstance(frame, Request)
                await self._stream(route, frame, receive, send)
            else:
                await self._buffered(route, frame, compact, caller, receive, send)
        finally:
            self._settle(route)

    # --- the fast path: ping and info on a stateless server ---

    def lifecycle(self, body: bytes, path_method: str) -> tuple[str, bytes] | None:
        """The method and answer of a plain ``ping``/``info`` on a stateless server, or None.

        They touch no session state and run no handler (the session answers them
        itself), so one shared stateless session serves them all, without a
        dispatcher per request. Only a body in exactly the common shape is taken
        here; any other goes the general way, which validates it in full. Every
        check before this point (auth, origin, rate, slots, body limits) has run.
        """
        try:
            plain = _decode_lifecycle(body)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError, UnicodeError):
            return None
        if path_method not in ("", plain.method):
            return None
        if not plain.params:  # valid for both: the answer is fixed (§7.2, §7.15, §13.2)
            result = self._fixed.get(plain.method) or self._fix(plain.method)
            answer = b'{"jsonrpc":"2.0","id":%b,"result":%b}' % (_encode_json(plain.id), result)
            return plain.method, answer
        request = Request(plain.id, plain.method, plain.params)
        try:
            prepared = self._stateless.prepare(request)
        except RCPError as error:
            return plain.method, codec.encode_error(request.id, error)
        assert isinstance(prepared, Immediate)
        return plain.method, codec.encode_result(request.id, prepared.result)

    def _fix(self, method: str) -> bytes:
        prepared = self._stateless.prepare(Request(0, method, {}))
        assert isinstance(prepared, Immediate)
        result: bytes = _encode_json(prepared.result)
        self._fixed[method] = result
        return result

    # --- which session (§5.2 Sessions) ---

    def _route(self, frame: Frame, headers: RequestHeaders, caller: Caller) -> _Route | Reply:
        if self._sessions is None:
            # Stateless: implicitly initialized; a fresh Session per request, so no
            # caller ever sees another's state or collides with another's ids.
            tenant = caller.principal.tenant
            return _Route(self._runtime.open(tenant=tenant, stateless=True))
        owner = caller.principal.name or ""
        if headers.session:
            entry = self._sessions.get(headers.session, owner)
            if entry is not None:
                entry.active += 1
                return _Route(entry.dispatcher, entry)
            if not _initializes(frame):
                return _answer_all(frame, _UNKNOWN_SESSION)
        if _initializes(frame) and not self._sessions.has_room(caller.key):
            return Reply.error(429, _TOO_MANY_SESSIONS, [(b"retry-after", b"1")])
        # No session yet: info/ping work and gated methods get -32001 (§13); the
        # session is kept only if this exchange initializes it.
        session = HttpSession(self._server)
        dispatcher = self._runtime.open(session, tenant=caller.principal.tenant)
        return _Route(dispatcher, opening=session)

    def _keep_if_opened(self, route: _Route, caller: Caller) -> None:
        # Runs right after submit, before any await: the token is stored before
        # the client can possibly present it.
        session = route.opening
        if session is None or not session.initialized or self._sessions is None:
            return
        route.opening = None
        entry = SessionEntry(session, route.dispatcher, caller.principal.name or "", caller.key)
        entry.active += 1
        self._sessions.add(entry)
        route.entry = entry
        route.headers = [(SESSION_HEADER, session.token.encode())]

    def _settle(self, route: _Route) -> None:
        entry = route.entry
        if entry is None or self._sessions is None:
            return
        entry.active -= 1
        if entry.session.closing:
            self._sessions.remove(entry.token)  # §7.12: shutdown ends the HTTP session
        else:
            self._sessions.touch(entry)

    # --- a buffered JSON answer ---

    async def _buffered(
        self,
        route: _Route,
        frame: Frame,
        compact: bool,
        caller: Caller,
        receive: Receive,
        send: Send,
    ) -> None:
        answer: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()

        def reply(data: bytes) -> None:
            if not answer.done():
                answer.set_result(data)

        try:
            route.dispatcher.submit(frame, reply, _drop)
        except Exception:
            log.exception("dispatching an HTTP request failed")
            await send_reply(send, Reply.error(500, _INTERNAL))
            return
        if route.opening is not None:
            self._keep_if_opened(route, caller)
        if not answer.done():
            if not _expects_answer(frame):
                # §4.5: a notification is never answered.
                await send_reply(send, Reply(204, headers=route.headers or []))
                return
            if not await _outlasts_client(answer, receive, route.dispatcher, _ids(frame)):
                return
        data = answer.result()
        await send_json(send, 200, to_compact(data) if compact else data, route.headers)

    # --- an SSE stream (§5.2 Streaming, §9) ---

    def _streams(self, frame: Frame, headers: RequestHeaders) -> bool:
        return (
            self._streaming
            and headers.wants_events
            and isinstance(frame, Request)
            and self._server.registration(frame.method) is not None
        )

    async def _stream(self, route: _Route, request: Request, receive: Receive, send: Send) -> None:
        frames: asyncio.Queue[tuple[bytes, bool]] = asyncio.Queue()
        try:
            route.dispatcher.submit(
                request,
                lambda data: frames.put_nowait((data, True)),
                lambda data: frames.put_nowait((data, False)),
            )
        except Exception:
            log.exception("dispatching an HTTP request failed")
            await send_reply(send, Reply.error(500, _INTERNAL))
            return
        start = {"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS}
        await send(start)
        gone = asyncio.ensure_future(wait_disconnect(receive))
        try:
            while True:
                item = await _next_or_gone(frames, gone)
                if item is None:
                    # §5.2: a client that goes away mid-stream cancels its request.
                    route.dispatcher.cancel(request.id)
                    return
                data, final = item
                message = {"type": "http.response.body", "body": sse_frame(data)}
                await send({**message, "more_body": not final})
                if final:
                    return
        except asyncio.CancelledError:
            route.dispatcher.cancel(request.id)
            raise
        finally:
            gone.cancel()


async def _next_or_gone(
    frames: asyncio.Queue[tuple[bytes, bool]], gone: asyncio.Future[None]
) -> tuple[bytes, bool] | None:
    """The next frame to write, or None once the client has disconnected."""
    if not frames.empty():
        return frames.get_nowait()
    getter = asyncio.ensure_future(frames.get())
    await asyncio.wait((getter, gone), return_when=asyncio.FIRST_COMPLETED)
    if getter.done():
        return getter.result()
    getter.cancel()
    return None


async def _outlasts_client(
    answer: asyncio.Future[bytes], receive: Receive, dispatcher: Dispatcher, ids: list[Any]
) -> bool:
    """Wait for the answer; if the client disconnects first, cancel its requests."""
    gone = asyncio.ensure_future(wait_disconnect(receive))
    try:
        await asyncio.wait((answer, gone), return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        _cancel(dispatcher, ids)
        raise
    finally:
        gone.cancel()
    if answer.done():
        return True
    _cancel(dispatcher, ids)  # §13.1: the connection died; stop the work
    return False


def _cancel(dispatcher: Dispatcher, ids: list[Any]) -> None:
    for id in ids:
        dispatcher.cancel(id)


# --- vetting a frame before it reaches a session ---


def _vet(frame: Frame, path_method: str, principal: Principal) -> Reply | None:
    """Refusals before a session: not a request, the wrong path, or a forbidden method.

    §5.2: a well-formed JSON-RPC response — one carrying a JSON-RPC error
    included — is HTTP 200. The transport can always produce one here, so a
    parse error (-32700) or an invalid request (-32600) is a 200 with that body.
    """
    if isinstance(frame, Invalid) and frame.id is None:
        return Reply(200, codec.encode_error(None, frame.error))
    if isinstance(frame, Response):
        return Reply.error(200, _invalid("a JSON-RPC response is not a request"))
    if isinstance(frame, Batch) and path_method:
        return Reply.error(200, _invalid("a batch is POSTed to the base path"))
    if isinstance(frame, Request | Notification) and path_method and frame.method != path_method:
        # §5.2: the method in the URL path must match the body's.
        error = _invalid(f"the path names `{path_method}` but the body `{frame.method}`")
        id = frame.id if isinstance(frame, Request) else None
        return Reply(200, codec.encode_error(id, error))
    if principal.write:
        return None  # may call anything
    forbidden = [method for method in _methods(frame) if not principal.may_call(method)]
    if forbidden:
        return _refuse(frame, forbidden[0])
    return None


def _adopt_traceparent(frame: Frame, header: bytes) -> None:
    """W3C ``traceparent`` → ``_meta.traceId`` of each request that names no trace (§17.2)."""
    trace_id = trace_id_of_traceparent(header)
    if trace_id is None:
        return
    members = frame.members if isinstance(frame, Batch) else [frame]
    for member in members:
        if not isinstance(member, Request):
            continue
        meta = member.params.setdefault("_meta", {})
        if isinstance(meta, dict) and trace_id_of(meta) is None:
            meta[TRACE_KEY] = trace_id


def _refuse(frame: Frame, method: str) -> Reply:
    """403 for a frame that calls ``method`` without the right to (§15.6).

    §4.7: a response echoes its request's id, so a refused request gets its own
    id back and a refused batch one entry per request; the whole frame is
    refused, none of it runs. Only a frame with no request in it (notifications
    alone) is answered with a null id.
    """
    error = RCPError(ErrorCode.UNAUTHORIZED, f"not authorised for {method}")
    return _answer_all(frame, error, status=403)


def _methods(frame: Frame) -> list[str]:
    members = frame.members if isinstance(frame, Batch) else [frame]
    return [member.method for member in members if isinstance(member, Request | Notification)]


def _ids(frame: Frame) -> list[Any]:
    members = frame.members if isinstance(frame, Batch) else [frame]
    return [member.id for member in members if isinstance(member, Request)]


class _Lifecycle(msgspec.Struct, forbid_unknown_fields=True):
    """A ``ping``/``info`` request in its plain shape (the fast path's only input).

    These two are answered by the session alone and free of session state;
    ``initialize`` and ``shutdown`` are not (they change the session they run on).
    """

    jsonrpc: Literal["2.0"]
    id: int | str
    method: Literal["ping", "info"]
    params: dict[str, Any] | None = None


_decode_lifecycle = msgspec.json.Decoder(_Lifecycle).decode
_encode_json = msgspec.json.Encoder().encode


def _initializes(frame: Frame) -> bool:
    members = frame.members if isinstance(frame, Batch) else [frame]
    return any(isinstance(m, Request) and m.method == "initialize" for m in members)


def _expects_answer(frame: Frame) -> bool:
    members = frame.members if isinstance(frame, Batch) else [frame]
    return any(isinstance(member, Request | Invalid) for member in members)


def _answer_all(frame: Frame, error: RCPError, status: int = 200) -> Reply:
    """Answer every request in ``frame`` with ``error``, each under its own id (§4.7).

    A notification gets nothing; a frame of notifications alone gets 204, or,
    for a refusal (a status other than 200), the error under a null id.
    """
    members = frame.members if isinstance(frame, Batch) else [frame]
    answers = [
        codec.encode_error(member.id, error if isinstance(member, Request) else member.error)
        for member in members
        if isinstance(member, Request | Invalid)
    ]
    if not answers:
        return Reply(204) if status == 200 else Reply.error(status, error)
    body = codec.encode_batch(answers) if isinstance(frame, Batch) else answers[0]
    return Reply(status, body)


def _drop(_data: bytes) -> None:
    """A buffered answer carries no progress: §5.2 wants one JSON response."""


def _invalid(message: str) -> RCPError:
    return RCPError(ErrorCode.INVALID_REQUEST, f"invalid request: {message}")


_UNKNOWN_SESSION = RCPError(
    ErrorCode.NOT_INITIALIZED,
    "unknown or expired session: send initialize again",
    detail="the RCP-Session header names no live session of this caller",
)
_TOO_MANY_SESSIONS = RCPError(
    ErrorCode.RATE_LIMITED, "too many open sessions", retry_after_ms=1000, retryable=True
)
_INTERNAL = RCPError(ErrorCode.INTERNAL_ERROR, "internal error")
