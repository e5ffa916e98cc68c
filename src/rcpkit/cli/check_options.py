"""The options of ``rcpkit check``, declared without importing the checker or the client."""

from __future__ import annotations

import argparse

__all__ = ["add_arguments"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "command", nargs=argparse.REMAINDER, help="after --: the stdio server command to spawn"
    )
    parser.add_argument("--http", default=None, metavar="URL", help="check an HTTP server (base)")
    parser.add_argument("--token-env", default=None, metavar="NAME", help="bearer token variable")
    parser.add_argument("--json", action="store_true", help="print the JSON report (§14.5)")
    parser.add_argument(
        "--query", default="retrieval", help="a query that matches the server's corpus"
    )
    parser.add_argument("--timeout", type=float, default=10.0, metavar="SECONDS")
    parser.add_argument("--cwd", default=None, help="working directory of the spawned server")
    parser.add_argument(
        "--pass-env",
        action="append",
        default=[],
        metavar="NAME",
        help="a variable to pass to the server beyond PATH, HOME, the locale and rcpkit's "
        "settings ($RCPKIT_INDEX, ...); others are withheld (§15.1)",
    )
