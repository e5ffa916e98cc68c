"""Running the bridge: MCP over stdio or Streamable HTTP, the engine connected first.

The engine is connected (``initialize``) before the MCP side starts, so the
tool list is known from the first ``tools/list`` and a broken engine fails
the command at once with its own message instead of a host-side timeout.
"""

from __future__ import annotations

import sys
from typing import Any

from rcpkit.mcp_bridge.backends import Source, open_backend
from rcpkit.mcp_bridge.bridge import Bridge

__all__ = ["serve_http", "serve_stdio"]


async def serve_stdio(source: Source, *, timeout: float | None = 60.0) -> None:
    """MCP on this process's stdin/stdout until the host closes it."""
    from mcp.server.stdio import stdio_server

    backend = await open_backend(source)
    try:
        server = Bridge(backend, timeout=timeout).server()
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
    finally:
        await backend.close()


async def serve_http(
    source: Source,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    path: str = "/mcp",
    timeout: float | None = 60.0,
) -> None:
    """MCP Streamable HTTP on ``host:port`` + ``path`` until SIGINT/SIGTERM."""
    from rcpkit.transport.http.config import Listen
    from rcpkit.transport.http.serve import serve_asgi

    backend = await open_backend(source)
    try:
        server = Bridge(backend, timeout=timeout).server()
        app: Any = server.streamable_http_app(streamable_http_path=path, host=host)
        await serve_asgi(app, Listen(host=host, port=port), base=path, announce=_announce)
    finally:
        await backend.close()


def _announce(url: str) -> None:
    print(f"rcpkit mcp: serving MCP (Streamable HTTP) on {url}", file=sys.stderr, flush=True)
