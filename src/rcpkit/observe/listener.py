"""``--metrics HOST:PORT``: GET /metrics on a listener of its own, off the public port.

A deliberately small HTTP/1.1 responder (one request per connection, a
bounded head read with a deadline), so it runs beside any transport,
stdio included, without a second web server or a second set of signal
handlers.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from rcpkit.observe.metrics import CONTENT_TYPE, Metrics

__all__ = ["metrics_listener"]

log = logging.getLogger("rcpkit.observe")

_MAX_HEAD = 8 * 1024
_HEAD_TIMEOUT = 5.0


@contextlib.asynccontextmanager
async def metrics_listener(
    metrics: Metrics, host: str, port: int, *, announce: bool = True
) -> AsyncIterator[asyncio.Server]:
    """Serve ``metrics`` on ``host:port`` for the duration of the ``async with``."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            async with asyncio.timeout(_HEAD_TIMEOUT):
                head = await reader.readuntil(b"\r\n\r\n")
            try:
                status, body, kind = _respond(head, metrics)
            except Exception:  # a failing scrape answers 500, it never takes the server down
                log.exception("rendering /metrics failed")
                status, body, kind = b"500 Internal Server Error", b"error\n", b"text/plain"
            writer.write(
                b"HTTP/1.1 %s\r\ncontent-type: %s\r\ncontent-length: %d\r\n"
                b"connection: close\r\n\r\n" % (status, kind, len(body)) + body
            )
            await writer.drain()
        except (TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, OSError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    server = await asyncio.start_server(answer, host, port, limit=_MAX_HEAD)
    if announce:
        import sys

        bound = server.sockets[0].getsockname()
        shown = f"[{bound[0]}]" if ":" in bound[0] else bound[0]
        # Worded so that it is never mistaken for the RCP endpoint's "serving … on <url>".
        print(
            f"rcpkit: Prometheus metrics at {shown}:{bound[1]}/metrics", file=sys.stderr, flush=True
        )
    try:
        yield server
    finally:
        server.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(server.wait_closed(), 2.0)


def _respond(head: bytes, metrics: Metrics) -> tuple[bytes, bytes, bytes]:
    line = head.split(b"\r\n", 1)[0].split()
    if len(line) < 2:
        return b"400 Bad Request", b"bad request\n", b"text/plain"
    verb, target = line[0], line[1].split(b"?", 1)[0]
    if target != b"/metrics":
        return b"404 Not Found", b"not found: GET /metrics\n", b"text/plain"
    if verb not in (b"GET", b"HEAD"):
        return b"405 Method Not Allowed", b"GET /metrics\n", b"text/plain"
    return b"200 OK", metrics.render(), CONTENT_TYPE.encode()
