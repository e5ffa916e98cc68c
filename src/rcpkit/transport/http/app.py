"""The ASGI app: admission (auth, origin, limits), routing and the lifespan.

With ``HttpConfig.console`` the web console's files are answered first, at
``/ui``: they are public and hold no data (``rcpkit.console.assets``).

Order of checks, each before the next (§5.2, §15.6): the caller is
authenticated (else 401, before ``initialize``, ``info``, capability gating
or even a 404/405 can say anything; only a CORS preflight, answered by the
middleware, comes earlier), a browser origin is allowed, the path is an RCP
path (404), the verb is POST (405), the body is declared JSON, the caller is
within its rate (429). Then the body is read, under its size limit (the
protocol bounds how long it may take), and only then is an in-flight slot
taken (429 per caller, 503 for the whole server): a slow body holds a
connection, never a slot (§15.5).
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor

from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from rcpkit.console import ConsoleSite, StaticReply
from rcpkit.observe.access import CURRENT_EXCHANGE, AccessRecord
from rcpkit.observe.metrics import CONTENT_TYPE
from rcpkit.observe.observer import Observer
from rcpkit.protocol.errors import ErrorCode, RCPError
from rcpkit.server.lowlevel import Server
from rcpkit.server.runner import Runtime
from rcpkit.transport.http.auth import ANONYMOUS, ANONYMOUS_READER, WRITE_METHODS
from rcpkit.transport.http.config import HttpConfig
from rcpkit.transport.http.exchange import Caller, Exchanges
from rcpkit.transport.http.limits import (
    Clock,
    ConcurrencyLimiter,
    RateLimiter,
    Refusal,
)
from rcpkit.transport.http.sessions import SessionStore
from rcpkit.transport.http.wire import (
    BodyTooLarge,
    ClientGone,
    Reply,
    RequestHeaders,
    lifespan,
    read_body,
    send_json,
    send_reply,
)

__all__ = ["HttpApp", "build_http_app"]

log = logging.getLogger("rcpkit.http")

_ALLOW = [(b"allow", b"OPTIONS, POST")]
# What a browser may send and read across origins (CORS).
_CORS_REQUEST_HEADERS = ["authorization", "content-type", "accept", "rcp-session", "x-api-key"]
_CORS_RESPONSE_HEADERS = ["rcp-session", "retry-after"]


def build_http_app(
    server: Server,
    config: HttpConfig | None = None,
    *,
    clock: Clock = time.monotonic,
    observer: Observer | None = None,
) -> ASGIApp:
    """An ASGI app serving ``server`` per §5.2 (with CORS when origins are configured)."""
    config = config or HttpConfig()
    app: ASGIApp = HttpApp(server, config, clock=clock, observer=observer)
    if config.cors_origins:
        app = CORSMiddleware(
            app,
            allow_origins=list(config.cors_origins),
            allow_methods=["POST", "OPTIONS", "GET"],  # GET: /metrics for a console elsewhere
            allow_headers=_CORS_REQUEST_HEADERS,
            expose_headers=_CORS_RESPONSE_HEADERS,
            max_age=600,
        )
    return app


class HttpApp:
    """RCP over HTTP for one Server."""

    def __init__(
        self,
        server: Server,
        config: HttpConfig,
        *,
        clock: Clock = time.monotonic,
        observer: Observer | None = None,
    ) -> None:
        self.config = config
        self._observer = observer
        self._anonymous = ANONYMOUS
        if config.credentials is None and not config.unauthenticated_writes:
            # §15.3: nobody authenticated, so nobody may write; nor is a write offered.
            self._anonymous = ANONYMOUS_READER
            if any(server.registration(method) is not None for method in WRITE_METHODS):
                server = server.read_only_copy(WRITE_METHODS)  # else: served as it is
        self.server = server
        self._prefix = "" if config.base == "/" else config.base
        self._slashed = self._prefix + "/"
        self._executor = ThreadPoolExecutor(config.threads, thread_name_prefix="rcpkit-http")
        self._rates = RateLimiter(config.rate_limit, clock=clock) if config.rate_limit else None
        self._slots = ConcurrencyLimiter(config.max_concurrent, config.max_inflight)
        self.sessions = (
            SessionStore(
                ttl=config.session_ttl,
                max_sessions=config.max_sessions,
                max_per_caller=config.max_sessions_per_caller,
                clock=clock,
            )
            if config.stateful
            else None
        )
        runtime = Runtime(
            server, self._executor, config.deadline, config.max_batch, observer=observer
        )
        self._exchanges = Exchanges(runtime, self.sessions)
        self._stateless = not config.stateful  # ping and info take the fast path
        self._any_origin = "*" in config.cors_origins
        self._origins = frozenset(config.cors_origins)
        self._console = None
        if config.console:
            public = observer is not None and observer.public_metrics
            self._console = ConsoleSite(self._prefix, "/metrics" if public else None)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            if scope["type"] == "lifespan":
                await lifespan(receive, send, self._closed)
            return
        if self._console is not None and self._console.owns(scope["path"]):
            # Public files, before auth (a browser navigating sends no token) and outside
            # the RCP metrics and access log: they are not RCP exchanges. The calls the
            # pages make are authenticated and counted like any other.
            await _send_static(send, self._console.reply(scope["method"], scope["path"]))
            return
        if self._observer is None:
            await self._exchange(scope, receive, send)
        else:
            await self._observed(self._observer, scope, receive, send)

    async def _observed(
        self, observer: Observer, scope: Scope, receive: Receive, send: Send
    ) -> None:
        """One exchange, counted by status and written as one access line."""
        record = AccessRecord()
        status = [0]

        async def sent(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = int(message["status"])
            await send(message)

        token = CURRENT_EXCHANGE.set(record)
        try:
            await self._exchange(scope, receive, sent)
        finally:
            CURRENT_EXCHANGE.reset(token)
            if record.method is None:  # refused before any request ran
                record.method = scope["path"].rpartition("/")[2] or None
            observer.http_done(record, status[0] or 499)

    async def _exchange(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = RequestHeaders.of(scope["headers"])
        admitted = self._admit(headers, scope)
        if isinstance(admitted, Reply):
            await send_reply(send, admitted)
            return
        if scope["path"] == "/metrics" and self._observer and self._observer.public_metrics:
            await self._metrics(scope["method"], send)  # behind the same auth as RCP
            return
        path_method = self._path_method(scope["path"])
        refused = self._refuse_request(path_method, scope["method"], headers, admitted.key)
        if refused is not None or path_method is None:
            await send_reply(send, refused or Reply(500))
            return
        try:
            body = await read_body(receive, self.config.max_body_bytes, headers.content_length)
        except BodyTooLarge:
            await send_reply(send, _too_large(self.config.max_body_bytes))
            return
        except ClientGone:
            return
        shed = self._take_slot(admitted.key)
        if shed is not None:
            await send_reply(send, shed)
            return
        try:
            answer = self._exchanges.lifecycle(body, path_method) if self._stateless else None
            if answer is not None:
                if self._observer is not None:
                    self._observer.answered(answer[0], answer[1], admitted.principal.tenant)
                await send_json(send, 200, answer[1])
            else:
                await self._exchanges.run(path_method, headers, admitted, body, receive, send)
        finally:
            self._slots.release(admitted.key)

    @property
    def in_flight(self) -> int:
        """HTTP exchanges admitted and not finished (SSE streams included)."""
        return self._slots.in_flight

    async def _metrics(self, verb: str, send: Send) -> None:
        assert self._observer is not None and self._observer.metrics is not None
        if verb != "GET":
            await send_reply(send, Reply(405, b"", [(b"allow", b"GET")]))
            return
        body = self._observer.metrics.render()
        headers = [(b"content-type", CONTENT_TYPE.encode()), (b"content-length", b"%d" % len(body))]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    def _path_method(self, path: str) -> str | None:
        """``<base>`` or ``<base>/`` → "" (batches, any method); ``<base>/<m>`` → m."""
        if path.startswith(self._slashed):
            return path[len(self._slashed) :]
        return "" if path == self._prefix else None

    def _admit(self, headers: RequestHeaders, scope: Scope) -> Caller | Reply:
        """Who the caller is (401) and whether its browser origin may call (403)."""
        credentials = self.config.credentials
        principal = self._anonymous
        if credentials is not None:
            found = None
            if not headers.ambiguous:
                found = credentials.authenticate(headers.authorization, headers.api_key)
            if found is None:
                return Reply.error(401, _UNAUTHENTICATED, [(b"www-authenticate", b"Bearer")])
            principal = found
        if headers.origin is not None and not self._origin_allowed(headers.origin, scope):
            # A browser page we were not configured to serve (or DNS rebinding).
            return Reply.error(403, RCPError(ErrorCode.UNAUTHORIZED, "origin not allowed"))
        if principal.name is not None:
            return Caller(principal, f"credential:{principal.name}")
        client = scope.get("client")
        return Caller(principal, f"address:{client[0] if client else 'unknown'}")

    def _refuse_request(
        self, path_method: str | None, verb: str, headers: RequestHeaders, key: str
    ) -> Reply | None:
        """An authenticated caller's request refused before its body is read."""
        if path_method is None:
            return Reply.error(404, _invalid("not an RCP endpoint"))
        if verb != "POST":
            return _not_post(verb)
        if not headers.is_json:
            # Also keeps cross-origin pages from posting without a CORS preflight.
            return Reply.error(400, _invalid("Content-Type must be application/json"))
        if self._rates is not None:
            wait_ms = self._rates.acquire(key)
            if wait_ms is not None:
                self._shed("rate")
                return _rate_limited("rate limit exceeded", wait_ms)
        return None

    def _origin_allowed(self, origin: str, scope: Scope) -> bool:
        if self._any_origin or origin in self._origins:
            return True
        # The console's own pages: their origin is this server's address as bound. A
        # DNS-rebinding page names its own host, so it is still refused.
        return self._console is not None and origin in _own_origins(scope)

    def _take_slot(self, key: str) -> Reply | None:
        """§15.5: an in-flight slot, taken once the body is in (429, 503 when none)."""
        refusal = self._slots.acquire(key)
        if refusal is None:
            return None
        self._shed("caller_in_flight" if refusal is Refusal.CALLER else "capacity")
        if refusal is Refusal.CALLER:
            return _rate_limited("too many requests in flight", 1000)
        error = RCPError(
            ErrorCode.BACKEND_UNAVAILABLE,
            "server at capacity",
            retryable=True,
            retry_after_ms=1000,
        )
        return Reply.error(503, error, [(b"retry-after", b"1")])

    def _shed(self, reason: str) -> None:
        if self._observer is not None:
            self._observer.shed(reason)

    async def _closed(self) -> None:
        self.close()

    def close(self) -> None:
        """After the drain (every exchange has ended or was cancelled): release threads."""
        # Cancelled work in threads stops at its next checkpoint; do not wait on it.
        self._executor.shutdown(wait=False, cancel_futures=True)


def _own_origins(scope: Scope) -> tuple[str, ...]:
    """The origins a page served by this socket has: its address, and localhost on loopback."""
    server = scope.get("server")
    if not server or server[1] is None:
        return ()
    host, port = server[0], server[1]
    literal = f"[{host}]" if ":" in host else host
    origins = [f"{scope.get('scheme', 'http')}://{literal}:{port}"]
    if host in ("127.0.0.1", "::1"):
        origins.append(f"{scope.get('scheme', 'http')}://localhost:{port}")
    return tuple(origins)


async def _send_static(send: Send, reply: StaticReply) -> None:
    headers = [(name.encode(), value.encode()) for name, value in reply.headers]
    await send({"type": "http.response.start", "status": reply.status, "headers": headers})
    await send({"type": "http.response.body", "body": reply.body})


def _not_post(verb: str) -> Reply:
    if verb == "OPTIONS":  # a non-CORS OPTIONS: say what is allowed
        return Reply(204, headers=list(_ALLOW))
    return Reply.error(405, _invalid("RCP requests are POSTed"), list(_ALLOW))


def _rate_limited(message: str, wait_ms: int) -> Reply:
    # §5.2: 429 mirrors -32011 and carries Retry-After (whole seconds, rounded up).
    error = RCPError(ErrorCode.RATE_LIMITED, message, retryable=True, retry_after_ms=wait_ms)
    seconds = str(max(1, -(-wait_ms // 1000))).encode()
    return Reply.error(429, error, [(b"retry-after", seconds)])


def _invalid(message: str) -> RCPError:
    return RCPError(ErrorCode.INVALID_REQUEST, message)


def _too_large(limit: int) -> Reply:
    error = RCPError(
        ErrorCode.PAYLOAD_TOO_LARGE,
        f"request body exceeds {limit} bytes",
        extra={"limit": limit},
        retryable=False,
    )
    # Close the connection: the rest of the body is never read (§15.5).
    return Reply.error(413, error, [(b"connection", b"close")])


_UNAUTHENTICATED = RCPError(
    ErrorCode.UNAUTHORIZED,
    "unauthorized: send Authorization: Bearer <token> or X-API-Key",
)
