"""Running the bridge: MCP over stdio or Streamable HTTP, the engine connected first.

The engine is connected (``initialize``) before the MCP side starts, so the
tool list is known from the first ``tools/list`` and a broken engine fails
the command at once with its own message instead of a host-side timeout.
"""

from __future__ import annotations

import io
import logging
import sys
from collections.abc import AsyncIterator
from typing import Any

from rcpkit.mcp_bridge.backends import Source, open_backend
from rcpkit.mcp_bridge.bridge import Bridge
from rcpkit.mcp_bridge.frames import MAX_FRAME_BYTES, screen

log = logging.getLogger("rcpkit.mcp")

__all__ = ["serve_http", "serve_stdio"]


async def serve_stdio(
    source: Source, *, timeout: float | None = 60.0, writes: bool = False
) -> None:
    """MCP on this process's stdin/stdout until the host closes it.

    Each line is screened first (``rcpkit.mcp_bridge.frames``): one the SDK could
    not take is answered at once with its JSON-RPC error instead of never."""
    from mcp.server.stdio import stdio_server

    backend = await open_backend(source)
    try:
        server = Bridge(backend, timeout=timeout, writes=writes).server()
        lines = _ScreenedLines()
        async with stdio_server(stdin=lines) as (read_stream, write_stream):  # type: ignore[arg-type]
            lines.answer_through(write_stream)
            await server.run(read_stream, write_stream, server.create_initialization_options())
    finally:
        await backend.close()


class _ScreenedLines:
    """stdin's lines for the SDK's reader, minus those answered here with an error."""

    def __init__(self) -> None:
        import anyio

        self._input = anyio.wrap_file(
            io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
        )
        self._ready = anyio.Event()
        self._write: Any = None

    def answer_through(self, write_stream: Any) -> None:
        self._write = write_stream
        self._ready.set()

    async def __aiter__(self) -> AsyncIterator[str]:
        from mcp.shared.message import SessionMessage

        async for line in self._input:
            refusal = screen(line)
            if refusal is None:
                yield line
                continue
            log.warning("answered a malformed frame: %s", refusal.message)
            await self._ready.wait()
            await self._write.send(SessionMessage(refusal.reply()))


async def serve_http(
    source: Source,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    path: str = "/mcp",
    timeout: float | None = 60.0,
    writes: bool = False,
) -> None:
    """MCP Streamable HTTP on ``host:port`` + ``path`` until SIGINT/SIGTERM."""
    from rcpkit.transport.http.config import Listen
    from rcpkit.transport.http.serve import serve_asgi

    backend = await open_backend(source)
    try:
        server = Bridge(backend, timeout=timeout, writes=writes).server()
        app: Any = server.streamable_http_app(streamable_http_path=path, host=host)
        screened = _ScreenedBodies(app)
        await serve_asgi(screened, Listen(host=host, port=port), base=path, announce=_announce)
    finally:
        await backend.close()


class _ScreenedBodies:
    """ASGI: a POST body the SDK would mishandle (a boolean id taken for a notification)
    is answered here, as over stdio: 413 past the limit, else 400 with the JSON-RPC error."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope.get("type") != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size, more = 0, True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                await self.app(scope, receive, send)  # a disconnect: the SDK's to handle
                return
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            more = bool(message.get("more_body")) and size <= MAX_FRAME_BYTES
        body = b"".join(chunks)
        refusal = screen(body)
        if refusal is not None:
            status = 413 if len(body) > MAX_FRAME_BYTES else 400
            reply = refusal.reply().model_dump_json(by_alias=True).encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": status,
                    "headers": [(b"content-type", b"application/json")],
                }
            )
            await send({"type": "http.response.body", "body": reply})
            return
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


def _announce(url: str) -> None:
    print(f"rcpkit mcp: serving MCP (Streamable HTTP) on {url}", file=sys.stderr, flush=True)
