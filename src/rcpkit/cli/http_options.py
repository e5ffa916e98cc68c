"""The HTTP options of ``rcpkit serve`` and ``rcpkit gateway``, defaulting to HttpConfig's.

The defaults are read from :class:`HttpConfig` and :class:`Listen`, so they are
declared once; this module and ``config`` import no web framework (the CLI
declares these options at every start-up).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rcpkit.transport.http.config import HttpConfig, Listen

__all__ = ["add_http_arguments"]


def add_http_arguments(parser: argparse.ArgumentParser) -> None:
    config, listen = HttpConfig(), Listen()
    http = parser.add_argument_group("HTTP (§5.2; needs the `http` extra)")
    http.add_argument(
        "--http",
        default=None,
        metavar="[HOST:]PORT",
        help=f"serve over HTTP instead of stdio; HOST defaults to {listen.host} (§15.1)",
    )
    http.add_argument("--base", default=config.base, help="base path (POST <base>/<method>)")
    http.add_argument(
        "--no-ui",
        dest="console",
        action="store_false",
        help="do not serve the web console at /ui (docs/console.md)",
    )
    http.add_argument(
        "--stateful",
        action="store_true",
        help="sessions: initialize returns _meta.session, sent back as RCP-Session",
    )
    http.add_argument("--session-ttl", type=float, default=config.session_ttl, metavar="SECONDS")
    http.add_argument(
        "--auth-file",
        type=Path,
        default=None,
        help="TOML file of [[token]] tables (also: $RCPKIT_HTTP_TOKENS='TOKEN[@TENANT],...')",
    )
    http.add_argument(
        "--allow-unauthenticated-writes",
        action="store_true",
        help="without --auth-file/$RCPKIT_HTTP_TOKENS, still accept index/add, index/delete, "
        "memory/build and feedback from anyone who can reach the port (default: read-only)",
    )
    http.add_argument(
        "--cors-origin", action="append", metavar="ORIGIN", help="allowed browser origin (repeat)"
    )
    http.add_argument("--rate-limit", type=float, default=None, metavar="PER_SECOND")
    http.add_argument("--rate-burst", type=int, default=None, metavar="REQUESTS")
    http.add_argument(
        "--max-concurrent",
        type=int,
        default=config.max_concurrent,
        help="in-flight requests per caller (0: no cap)",
    )
    http.add_argument(
        "--max-inflight",
        type=int,
        default=config.max_inflight,
        help="in-flight requests in all (0: no cap)",
    )
    http.add_argument("--max-body-bytes", type=int, default=config.max_body_bytes)
    http.add_argument(
        "--workers",
        type=_positive,
        default=None,
        metavar="N",
        help="worker processes on one socket (default: $RCPKIT_HTTP_WORKERS, else one per "
        "core for the persistent engine, 1 for the in-memory one)",
    )
    http.add_argument(
        "--threads",
        type=_positive,
        default=config.threads,
        metavar="N",
        help="threads per process for CPU-bound handlers",
    )
    http.add_argument("--keep-alive", type=int, default=listen.keep_alive, metavar="SECONDS")
    http.add_argument(
        "--drain-timeout",
        type=int,
        default=listen.drain_timeout,
        metavar="SECONDS",
        help="on SIGTERM/SIGINT, how long in-flight requests may take to finish",
    )
    http.add_argument(
        "--trust-proxy",
        default=None,
        metavar="IPS",
        help="proxy addresses whose X-Forwarded-For names the client",
    )


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"takes a positive integer, not {text!r}")
    return value
