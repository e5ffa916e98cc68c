"""The parent's router under ``--workers N --stateful``: each session stays on its worker.

A stateful session (§5.2) is a ``Session`` and a ``Dispatcher`` in one worker's
memory: its handshake, its in-flight ids for ``notifications/cancel``. So the
parent serves the public socket itself and passes each HTTP request on to a
worker over loopback: a request whose ``RCP-Session`` token a worker minted
(``<worker>.<random>``, ``sessions.HttpSession``) goes to that worker, any
other round-robin. Bodies and SSE streams are relayed as they come, never
buffered, so the worker's own limits (body size, deadlines) and a client that
goes away (the worker then cancels) behave as without the router. Without
``--stateful`` the workers share the public socket and no byte passes here.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Sequence

import httpx
from starlette.types import Message, Receive, Scope, Send

from rcpkit.transport.http.wire import SESSION_HEADER, lifespan

__all__ = ["WorkerRouter", "session_worker"]

# Hop-by-hop headers (RFC 9110 §7.6.1) end at each hop; the relay sets its own framing.
_HOP_BY_HOP = frozenset(
    {
        b"connection",
        b"keep-alive",
        b"proxy-connection",
        b"te",
        b"trailer",
        b"transfer-encoding",
        b"upgrade",
        b"host",
        b"content-length",
    }
)


def session_worker(token: bytes, workers: int) -> int | None:
    """The worker that minted ``token``, or None for no token or a foreign one."""
    prefix, dot, _ = token.partition(b".")
    if not dot or not prefix.isdigit():
        return None
    index = int(prefix)
    return index if index < workers else None


class WorkerRouter:
    """An ASGI app relaying every HTTP request to one of ``upstreams`` (worker base URLs)."""

    def __init__(self, upstreams: Sequence[str], *, timeout: float | None = None) -> None:
        self._upstreams = list(upstreams)
        self._turn = itertools.cycle(range(len(self._upstreams)))
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=256)
        self._client = httpx.AsyncClient(timeout=httpx.Timeout(timeout), limits=limits)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await lifespan(receive, send, self._client.aclose)
            return
        if scope["type"] != "http":
            return
        headers = [(k, v) for k, v in scope["headers"] if k.lower() not in _HOP_BY_HOP]
        token = next((v for k, v in scope["headers"] if k.lower() == SESSION_HEADER), b"")
        index = session_worker(token, len(self._upstreams))
        if index is None:
            index = next(self._turn)
        client = scope.get("client")
        if client:  # the worker trusts loopback's X-Forwarded-For (it is this router)
            headers.append((b"x-forwarded-for", client[0].encode()))
        url = self._upstreams[index] + scope["raw_path"].decode("latin-1")
        if scope.get("query_string"):
            url += "?" + scope["query_string"].decode("latin-1")
        request = self._client.build_request(
            scope["method"], url, headers=headers, content=_body(receive)
        )
        try:
            upstream = await self._client.send(request, stream=True)
        except httpx.HTTPError:
            await _respond(send, 502, b"the worker for this request is not answering\n")
            return
        try:
            await send(
                {
                    "type": "http.response.start",
                    "status": upstream.status_code,
                    "headers": [
                        (k, v) for k, v in upstream.headers.raw if k.lower() not in _HOP_BY_HOP
                    ],
                }
            )
            async for chunk in upstream.aiter_raw():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b""})
        except httpx.HTTPError:
            await send({"type": "http.response.body", "body": b""})
        finally:
            await upstream.aclose()


async def _body(receive: Receive) -> AsyncIterator[bytes]:
    while True:
        message: Message = await receive()
        if message["type"] == "http.disconnect":
            return
        chunk = message.get("body", b"")
        if chunk:
            yield chunk
        if not message.get("more_body", False):
            return


async def _respond(send: Send, status: int, text: bytes) -> None:
    headers = [(b"content-type", b"text/plain; charset=utf-8")]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": text})
