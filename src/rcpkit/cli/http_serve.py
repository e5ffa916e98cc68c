"""``rcpkit serve --http``: command-line options → HttpConfig + Listen → uvicorn."""

from __future__ import annotations

import argparse
import logging
import sys

from rcpkit.observe.observer import Observer
from rcpkit.server.dispatcher import DEFAULT_DEADLINE
from rcpkit.server.lowlevel import Server
from rcpkit.transport.http.auth import TOKENS_ENV, WRITE_METHODS, Credentials
from rcpkit.transport.http.config import HttpConfig, Listen, RateLimit, is_loopback, parse_bind

__all__ = ["config_from_args", "serve_command"]

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
        workers=args.workers,
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
    if config.credentials is None:
        _announce_write_policy(server, config)
    run_http(server, config, listen, observer=observer, metrics_at=metrics_at)
    return 0


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
