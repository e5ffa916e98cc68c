"""``rcpkit serve --http``: command-line options → HttpConfig + Listen → uvicorn."""

from __future__ import annotations

import argparse
import logging
import sys
import threading
from typing import Any

from rcpkit.observe.observer import Observer
from rcpkit.server.dispatcher import DEFAULT_DEADLINE
from rcpkit.server.lowlevel import Server
from rcpkit.transport.http.auth import TOKENS_ENV, WRITE_METHODS, Credentials
from rcpkit.transport.http.config import HttpConfig, Listen, RateLimit, is_loopback, parse_bind
from rcpkit.transport.http.workers import worker_index

__all__ = ["config_from_args", "serve_command", "serve_workers_command"]

log = logging.getLogger("rcpkit.http")


def config_from_args(
    args: argparse.Namespace, *, tenant_aware: bool = False
) -> tuple[HttpConfig, Listen]:
    """The options of ``add_http_arguments``, typed; ``tenant_aware``: the caller's
    server honours ``ctx.tenant`` (the CLI knows which engines do, this module not)."""
    if getattr(args, "stdio", False):
        raise ValueError("--stdio and --http name two different transports; pick one")
    host, port = parse_bind(args.http)
    rate = None
    if args.rate_limit is not None:
        burst = args.rate_burst if args.rate_burst is not None else max(1, int(args.rate_limit))
        rate = RateLimit(args.rate_limit, burst)
    config = HttpConfig(
        base=args.base,
        stateful=args.stateful,
        session_ttl=args.session_ttl,
        credentials=Credentials.load(args.auth_file),
        tenant_aware=tenant_aware,
        cors_origins=tuple(args.cors_origin or ()),
        rate_limit=rate,
        max_concurrent=args.max_concurrent or None,
        max_inflight=args.max_inflight or None,
        max_body_bytes=args.max_body_bytes,
        max_batch=args.max_batch,
        unauthenticated_writes=getattr(args, "allow_unauthenticated_writes", False),
        # §13.1: the server's default unless the operator says otherwise (0: none).
        deadline=DEFAULT_DEADLINE if args.deadline is None else (args.deadline or None),
        threads=args.threads,
        console=getattr(args, "console", False),
    )
    listen = Listen(
        host=host,
        port=port,
        keep_alive=args.keep_alive,
        drain_timeout=args.drain_timeout,
        trusted_proxies=args.trust_proxy,
    )
    return config, listen


def serve_command(
    server: Server,
    args: argparse.Namespace,
    *,
    tenant_aware: bool = False,
    observer: Observer | None = None,
    metrics_at: tuple[str, int] | None = None,
) -> int:
    """Serve ``server`` over HTTP until SIGTERM/SIGINT; 0 once drained."""
    from rcpkit.transport.http.serve import run_http

    config, listen = config_from_args(args, tenant_aware=tenant_aware)
    if not is_loopback(listen.host) and config.credentials is None:
        # §15.1: off loopback, put auth (and TLS in front) on it.
        log.warning(
            "serving %s without authentication (set --auth-file or $%s)", listen.host, TOKENS_ENV
        )
    if config.credentials is None and worker_index() in (None, 0):  # said once, not per worker
        _announce_write_policy(server, config)
    run_http(server, config, listen, observer=observer, metrics_at=metrics_at)
    return 0


def serve_workers_command(
    args: argparse.Namespace, workers: int, *, tenant_aware: bool = False
) -> int:
    """``--workers N``: bind once, then run N copies of this command.

    The parent opens no index: it checks the options, binds, and supervises
    (``workers.Supervisor``); each worker runs ``serve_command``. Stateless,
    each worker accepts on its own socket bound to the public address
    (``bind_sockets``: ``SO_REUSEPORT``). With ``--stateful`` each worker has a
    loopback socket of its own and the parent routes (``router.WorkerRouter``),
    so every request of a session reaches the worker that holds it.
    ``tenant_aware``: the workers' engine honours ``ctx.tenant`` (as for ``serve_command``).
    """
    from rcpkit.transport.http.serve import bind_socket, bind_sockets, console_url, url_of
    from rcpkit.transport.http.workers import Supervisor

    config, listen = config_from_args(args, tenant_aware=tenant_aware)
    # Stateless: a socket per worker on the one address (SO_REUSEPORT), so the kernel
    # balances connections; stateful: the parent's router holds the public one.
    public_sockets = bind_sockets(listen, 1 if config.stateful else workers)
    public = public_sockets[0]
    url = url_of(public, config.base)
    argv = [sys.executable, "-m", "rcpkit", *args.argv]
    if config.stateful:
        private = [bind_socket(Listen(port=0, backlog=listen.backlog)) for _ in range(workers)]
        # The router is the workers' only client: they believe its X-Forwarded-For.
        trusted = ",".join(filter(None, ["127.0.0.1", listen.trusted_proxies]))
        argv += ["--trust-proxy", trusted]
        router = _Router(public, private, listen)
        sockets, on_stop = private, router.stop
    else:
        router, private, sockets, on_stop = None, [], public_sockets, _nothing
    for sock in sockets:
        sock.set_inheritable(True)

    def announce() -> None:
        if router is not None:
            router.start()
        routed = ", sessions routed to their worker" if router is not None else ""
        print(
            f"rcpkit: serving RCP over HTTP on {url} ({workers} worker processes{routed})",
            file=sys.stderr,
            flush=True,
        )
        if config.console:
            print(
                f"rcpkit: web console on {console_url(url, config.base)}",
                file=sys.stderr,
                flush=True,
            )

    supervisor = Supervisor(
        argv, workers, sockets, announce, drain_timeout=listen.drain_timeout, on_stop=on_stop
    )
    try:
        return supervisor.run()
    finally:
        if router is not None:
            router.join()
        for sock in [*public_sockets, *private]:
            sock.close()


class _Router:
    """The parent's ``WorkerRouter`` on the public socket, served from a thread."""

    def __init__(self, public: Any, private: list[Any], listen: Listen) -> None:
        from rcpkit.transport.http.router import WorkerRouter
        from rcpkit.transport.http.serve import routing_server

        upstreams = [f"http://127.0.0.1:{sock.getsockname()[1]}" for sock in private]
        self._server = routing_server(WorkerRouter(upstreams), listen)
        self._public = public
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._public]}, name="rcpkit-router"
        )
        self._thread.start()

    def stop(self) -> None:
        self._server.should_exit = True

    def join(self) -> None:
        self.stop()
        if self._thread is not None:
            self._thread.join(timeout=60)


def _nothing() -> None:
    return None


def _announce_write_policy(server: Server, config: HttpConfig) -> None:
    """§15.3: without auth, say on stderr whether anyone may write (default: no one)."""
    writes = sorted(method for method in WRITE_METHODS if server.registration(method))
    if not writes:
        return
    if config.unauthenticated_writes:
        message = (
            "rcpkit: WARNING: no authentication and --allow-unauthenticated-writes: "
            f"anyone who can reach the port may call {', '.join(writes)}"
        )
    else:
        message = (
            "rcpkit: serving read-only over HTTP: no authentication is configured, so "
            f"{', '.join(writes)} are refused (-32012) and not advertised; set --auth-file "
            f"or ${TOKENS_ENV}, or pass --allow-unauthenticated-writes"
        )
    print(message, file=sys.stderr, flush=True)
