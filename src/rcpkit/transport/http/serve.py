"""Serving on uvicorn: bind, announce the address, drain on SIGTERM/SIGINT, exit 0.

uvicorn (httptools parser, uvloop) gives keep-alive, pipelining, concurrent
requests and a bounded graceful shutdown: on a signal it stops accepting,
lets in-flight requests finish for up to ``Listen.drain_timeout`` seconds,
then cancels what is left (each such request still answers -32006).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Literal

import uvicorn
from starlette.types import ASGIApp

from rcpkit.console import CONSOLE_PATH
from rcpkit.observe.observer import Observer
from rcpkit.observe.serving import observed
from rcpkit.server.lowlevel import Server
from rcpkit.server.runner import run_async
from rcpkit.transport.http.app import build_http_app
from rcpkit.transport.http.config import HttpConfig, Listen
from rcpkit.transport.http.workers import inherited_socket, signal_ready

__all__ = [
    "bind_socket",
    "bind_sockets",
    "console_url",
    "routing_server",
    "run_http",
    "serve_asgi",
    "serve_http",
    "with_console",
]

Announce = Callable[[str], None]


def bind_socket(listen: Listen, *, reuse_port: bool = False) -> socket.socket:
    """A listening socket (port 0 picks a free one); connections queue from here on."""
    family = socket.AF_INET6 if ":" in listen.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if reuse_port:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((listen.host, listen.port))
        sock.listen(listen.backlog)
    except OSError:
        sock.close()
        raise
    sock.setblocking(False)
    return sock


def bind_sockets(listen: Listen, count: int) -> list[socket.socket]:
    """``count`` listening sockets on one address, one per worker process.

    With ``SO_REUSEPORT`` (Linux, the BSDs) the kernel spreads new connections over
    the sockets by their addresses, so each worker accepts its share. On one shared
    socket the first worker to wake took every pending connection: with 64
    keep-alive clients one worker held 61 to 64 of them in 3 of 9 runs, the other
    idle (BENCHMARKS.md, "HTTP worker processes"; issue 31). Without the option:
    one socket, shared.
    """
    if count < 2 or not hasattr(socket, "SO_REUSEPORT"):
        return [bind_socket(listen)]
    first = bind_socket(listen, reuse_port=True)
    port = first.getsockname()[1]  # port 0 picked one: the others join it
    sockets = [first]
    try:
        for _ in range(count - 1):
            sockets.append(bind_socket(replace(listen, port=port), reuse_port=True))
    except OSError:
        for sock in sockets:
            sock.close()
        raise
    return sockets


def url_of(sock: socket.socket, base: str) -> str:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{'' if base == '/' else base}"


async def serve_http(
    server: Server,
    config: HttpConfig | None = None,
    listen: Listen | None = None,
    *,
    announce: Announce | None = None,
    sock: socket.socket | None = None,
    observer: Observer | None = None,
) -> None:
    """Serve until SIGTERM/SIGINT (or ``should_exit``), then drain and return."""
    config = config or HttpConfig()
    app = build_http_app(server, config, observer=observer)
    if announce is None and config.console:
        announce = with_console(config.base)
    await serve_asgi(app, listen, base=config.base, announce=announce, sock=sock)


async def serve_asgi(
    app: ASGIApp,
    listen: Listen | None = None,
    *,
    base: str = "/",
    announce: Announce | None = None,
    sock: socket.socket | None = None,
) -> None:
    """Serve any ASGI app the way ``serve_http`` does (the benchmark's no-op floor)."""
    listen = listen or Listen()
    inherited = sock is None and (sock := inherited_socket()) is not None
    sock = sock or bind_socket(listen)
    uvicorn_server = _Server(uvicorn_config(app, listen))
    if not inherited:  # a worker's parent announces the address once for all of them
        (announce or _to_stderr)(url_of(sock, base))
    await uvicorn_server.serve(sockets=[sock])


def uvicorn_config(app: ASGIApp, listen: Listen) -> uvicorn.Config:
    return uvicorn.Config(
        app,
        http=_http_protocol(listen),
        lifespan="on",
        log_config=None,  # keep the process's own logging setup
        access_log=False,  # §15.6: no request logs by default
        server_header=False,
        timeout_keep_alive=listen.keep_alive,
        timeout_graceful_shutdown=listen.drain_timeout,
        # X-Forwarded-For is believed only from configured proxies.
        proxy_headers=listen.trusted_proxies is not None,
        forwarded_allow_ips=listen.trusted_proxies,
        backlog=listen.backlog,
        # Without httptools (uvicorn's h11 protocol), at least the head's size is bounded.
        h11_max_incomplete_event_size=listen.head.max_header_bytes,
    )


def routing_server(app: ASGIApp, listen: Listen) -> uvicorn.Server:
    """A uvicorn server for the parent's router (run from a thread: no signal handlers)."""
    return _Server(uvicorn_config(app, listen))


def run_http(
    server: Server,
    config: HttpConfig | None = None,
    listen: Listen | None = None,
    *,
    observer: Observer | None = None,
    metrics_at: tuple[str, int] | None = None,
) -> None:
    """Blocking entry point: serve, and return after a signal once drained.

    ``metrics_at``: where the observer's own /metrics listener binds, if it has one.
    """
    run_async(observed(observer, metrics_at, serve_http(server, config, listen, observer=observer)))


class _Server(uvicorn.Server):
    """uvicorn's server, except that a handled signal then ends the process normally.

    uvicorn re-raises a captured SIGTERM after draining, which kills the
    process with the signal's default action; a drained server exits 0.
    A worker process tells its parent once it accepts connections.
    """

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            signal_ready()

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        handled = (signal.SIGINT, signal.SIGTERM)
        original = {sig: signal.signal(sig, self.handle_exit) for sig in handled}
        try:
            yield
        finally:
            for sig, handler in original.items():
                signal.signal(sig, handler)


def _http_protocol(listen: Listen) -> type[asyncio.Protocol] | Literal["auto"]:
    try:
        from rcpkit.transport.http.protocol import protocol_for
    except ImportError:  # no httptools: uvicorn's pure-Python h11 protocol
        return "auto"
    return protocol_for(listen.head)


def _to_stderr(url: str) -> None:
    print(f"rcpkit: serving RCP over HTTP on {url}", file=sys.stderr, flush=True)


def with_console(base: str) -> Announce:
    """Announce the RCP URL and, beside it, where the web console answers (issue 52)."""

    def announce(url: str) -> None:
        _to_stderr(url)
        print(f"rcpkit: web console on {console_url(url, base)}", file=sys.stderr, flush=True)

    return announce


def console_url(url: str, base: str) -> str:
    """The console's address on the origin of the RCP endpoint ``url`` (served at ``base``)."""
    origin = url.removesuffix(base) if base != "/" else url
    return f"{origin}{CONSOLE_PATH}"
