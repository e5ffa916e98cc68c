"""RCP over HTTP(S) (§5.2) with httpx: keep-alive, bearer auth, sessions and SSE.

Each request is its own ``POST <base>/<method>``; its answer (a JSON body, or
an SSE stream of progress frames then the response) comes back on that
exchange. Non-200 statuses are transport faults, mapped to the RCP code they
mirror (§5.2 table) so retry and failover treat them like any other error.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any

from rcpkit import codec
from rcpkit.client.channel import Outgoing, Receiver
from rcpkit.codec import Batch, Invalid, Response
from rcpkit.protocol.base import Id
from rcpkit.protocol.errors import ErrorCode, RCPError

if TYPE_CHECKING:
    import httpx

__all__ = ["HttpChannel", "HttpEndpoint", "import_httpx", "status_error"]

log = logging.getLogger("rcpkit.client")

SESSION_HEADER = "rcp-session"


def import_httpx() -> ModuleType:
    """httpx, imported on first use: stdio-only users need not install the ``http`` extra."""
    try:
        import httpx
    except ImportError:  # pragma: no cover - depends on the installation
        raise ImportError("RCP over HTTP needs httpx: pip install 'rcpkit[http]'") from None
    return httpx


@dataclass(frozen=True, slots=True)
class HttpEndpoint:
    """An HTTP server's base URL (``http://host:port/rcp``) and how to reach it.

    ``token`` is sent as ``Authorization: Bearer`` (§15.6: credentials travel in
    headers, never in params). ``verify`` is httpx's TLS setting.
    """

    url: str
    token: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    verify: bool | str = True
    connect_timeout: float = 10.0
    max_connections: int = 32

    def __post_init__(self) -> None:
        if not self.url.startswith(("http://", "https://")):
            raise ValueError(f"an HTTP endpoint URL starts with http:// or https://: {self.url!r}")


_STATUS_CODES: dict[int, ErrorCode] = {
    400: ErrorCode.INVALID_REQUEST,
    401: ErrorCode.UNAUTHORIZED,
    403: ErrorCode.UNAUTHORIZED,
    404: ErrorCode.BACKEND_UNAVAILABLE,
    413: ErrorCode.PAYLOAD_TOO_LARGE,
    429: ErrorCode.RATE_LIMITED,
    500: ErrorCode.INTERNAL_ERROR,
    502: ErrorCode.BACKEND_UNAVAILABLE,
    503: ErrorCode.BACKEND_UNAVAILABLE,
    504: ErrorCode.TIMEOUT,
}


def status_error(status: int, body: bytes, headers: Mapping[str, str]) -> RCPError:
    """§5.2: a non-200 answer as the RCP error it mirrors (the body's, when it has one)."""
    error: RCPError | None = None
    with contextlib.suppress(Exception):
        frame = codec.decode(body)
        if isinstance(frame, Response) and frame.error is not None:
            error = RCPError.from_wire(frame.error)
    if error is None:
        code = _STATUS_CODES.get(status, ErrorCode.INTERNAL_ERROR)
        error = RCPError(code, f"HTTP {status}")
    retry_after = headers.get("retry-after", "").strip()
    if error.retry_after_ms is None and retry_after.isdigit():
        error.retry_after_ms = int(retry_after) * 1000
    error.extra = {**(error.extra or {}), "httpStatus": status}
    return error


class HttpChannel:
    """One httpx client (a keep-alive pool) carrying every exchange with one server."""

    def __init__(
        self, endpoint: HttpEndpoint, *, transport: httpx.AsyncBaseTransport | None = None
    ) -> None:
        self.endpoint = endpoint
        self._url = endpoint.url.rstrip("/")
        self._transport = transport
        self._client: httpx.AsyncClient | None = None
        self._receiver: Receiver | None = None
        self._session: str | None = None
        self._exchanges: dict[tuple[type, Id], asyncio.Task[None]] = {}
        self._notifications: set[asyncio.Task[None]] = set()

    @property
    def description(self) -> str:
        return self._url

    @property
    def session(self) -> str | None:
        """The stateful session token from ``initialize`` (§5.2), if the server issued one."""
        return self._session

    async def open(self, receiver: Receiver) -> None:
        httpx = import_httpx()
        endpoint = self.endpoint
        headers = dict(endpoint.headers)
        if endpoint.token is not None:
            headers["authorization"] = f"Bearer {endpoint.token}"
        timeout = httpx.Timeout(
            connect=endpoint.connect_timeout, read=None, write=30.0, pool=endpoint.connect_timeout
        )
        self._client = httpx.AsyncClient(
            headers=headers,
            timeout=timeout,
            verify=endpoint.verify,
            limits=httpx.Limits(max_connections=endpoint.max_connections),
            transport=self._transport,
        )
        self._receiver = receiver

    def send(self, message: Outgoing) -> None:
        if message.id is None and message.method == "notifications/cancel" and not self._session:
            # Stateless: each POST is its own session, so a cancel would reach nobody;
            # abandoning the exchange (closing its connection) cancels instead.
            return
        task = asyncio.get_running_loop().create_task(self._exchange(message))
        if message.id is None:
            self._notifications.add(task)
            task.add_done_callback(self._notifications.discard)
        else:
            key = (type(message.id), message.id)
            self._exchanges[key] = task
            task.add_done_callback(lambda _: self._exchanges.pop(key, None))

    def abandon(self, id: Id) -> None:
        task = self._exchanges.pop((type(id), id), None)
        if task is not None:
            task.cancel()  # closes the exchange; §5.2 servers cancel a request whose client left

    def renew(self) -> bool:
        """Forget the session (it expired, -32001) so that a new ``initialize`` opens one."""
        self._session = None
        return True

    async def _exchange(self, message: Outgoing) -> None:
        assert self._client is not None and self._receiver is not None
        httpx = import_httpx()
        headers = {"content-type": "application/json"}
        headers["accept"] = (
            "text/event-stream, application/json" if message.stream else ("application/json")
        )
        if self._session:
            headers[SESSION_HEADER] = self._session
        url = f"{self._url}/{message.method}"
        try:
            async with self._client.stream(
                "POST", url, content=message.data, headers=headers
            ) as response:
                await self._answer(message, response)
        except httpx.HTTPError as error:
            if message.id is not None:
                reason = f"HTTP transport: {type(error).__name__}: {error}".rstrip(": ")
                self._receiver.fail(message.id, RCPError(ErrorCode.BACKEND_UNAVAILABLE, reason))

    async def _answer(self, message: Outgoing, response: httpx.Response) -> None:
        assert self._receiver is not None
        if response.status_code == 204:
            return
        if response.status_code != 200:
            body = await response.aread()
            if message.id is not None:
                error = status_error(response.status_code, body, response.headers)
                self._receiver.fail(message.id, error)
            return
        if message.method == "initialize" and response.headers.get(SESSION_HEADER):
            self._session = response.headers[SESSION_HEADER]
        answered = False
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            async for data in _sse_events(response):
                answered = self._deliver(message, data) or answered
        else:
            answered = self._deliver(message, await response.aread())
        if message.id is not None and not answered:
            # The exchange is over and carried no response for it: fail now, not at the deadline.
            reason = "the HTTP exchange ended without a JSON-RPC response"
            self._receiver.fail(message.id, RCPError(ErrorCode.BACKEND_UNAVAILABLE, reason))

    def _deliver(self, message: Outgoing, data: bytes) -> bool:
        """Hand the frame's messages on; whether one of them answered ``message``."""
        assert self._receiver is not None
        frame = codec.decode(data)
        members = frame.members if isinstance(frame, Batch) else [frame]
        answered = False
        for member in members:
            if isinstance(member, Response):
                if member.id is None and member.error is not None and message.id is not None:
                    # The exchange itself correlates an id-less error (§5.2).
                    self._receiver.fail(message.id, RCPError.from_wire(member.error))
                    answered = True
                    continue
                answered = answered or member.id == message.id
                if message.method == "initialize" and not self._session:
                    self._session = _session_of(member.result)
            if isinstance(member, Invalid):
                log.warning("%s sent an undecodable body: %s", self._url, member)
                continue
            self._receiver.deliver(member)
        return answered

    async def close(self) -> None:
        tasks = [*self._exchanges.values(), *self._notifications]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=2.0)
        if self._client is not None:
            await self._client.aclose()
        if self._receiver is not None:
            self._receiver.lost(f"{self._url}: the client was closed")


async def _sse_events(response: httpx.Response) -> AsyncIterator[bytes]:
    """§5.2: SSE ``data:`` lines, one event per blank-line-terminated block."""
    lines: list[str] = []
    async for line in response.aiter_lines():
        if not line:
            if lines:
                yield "\n".join(lines).encode()
                lines = []
        elif line.startswith("data:"):
            lines.append(line[5:].lstrip(" "))
    if lines:
        yield "\n".join(lines).encode()


def _session_of(result: Any) -> str | None:
    meta = result.get("_meta") if isinstance(result, dict) else None
    session = meta.get("session") if isinstance(meta, dict) else None
    return session if isinstance(session, str) and session else None
