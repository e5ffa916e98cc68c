"""The options of ``rcpkit gateway``, declared without importing the federation stack.

The CLI declares every subcommand's options at each start-up, so this module
imports argparse and the HTTP option declarations only. ``FUSIONS`` and
``DEDUPS`` name ``rcpkit.federation.fusion``'s strategies and dedup keys (a test
holds them equal).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from rcpkit.cli.http_options import add_http_arguments
from rcpkit.cli.observe_options import add_observe_arguments

__all__ = ["DEDUPS", "FUSIONS", "add_arguments"]

FUSIONS = ("calibrated", "convex", "rrf", "weighted")
DEDUPS = ("content", "id", "uri")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("registry", type=Path, help="the rcp.json registry (§16.1) to federate")
    gateway = parser.add_argument_group("federation (§16)")
    gateway.add_argument("--name", default="rcpkit-gateway", help="server name in initialize")
    gateway.add_argument(
        "--identity",
        default=None,
        help="identity in _meta.federation.path (default: NAME@<registry path digest>)",
    )
    gateway.add_argument(
        "--hide-endpoints", action="store_true", help="catalog/list omits engine endpoints"
    )
    gateway.add_argument("--fusion", choices=FUSIONS, default="calibrated")
    gateway.add_argument(
        "--rrf-k", type=int, default=None, help="RRF's k (default: the engine's RRF constant)"
    )
    gateway.add_argument("--dedup", choices=DEDUPS, default="id")
    gateway.add_argument("--connect-timeout", type=float, default=10.0, metavar="SECONDS")
    gateway.add_argument("--engine-timeout", type=float, default=10.0, metavar="SECONDS")
    gateway.add_argument(
        "--slow-engine",
        type=float,
        default=2.0,
        metavar="SECONDS",
        help="an engine whose last --slow-strikes calls each took longer is demoted",
    )
    gateway.add_argument(
        "--reconnect-after",
        type=float,
        default=5.0,
        metavar="SECONDS",
        help="an engine that went down is reconnected on a query after this cool-down",
    )
    gateway.add_argument("--slow-strikes", type=int, default=3, metavar="N")
    gateway.add_argument(
        "--demoted-timeout",
        type=float,
        default=0.25,
        metavar="SECONDS",
        help="what a demoted engine gets per call (one answer in time promotes it)",
    )
    gateway.add_argument(
        "--deadline",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="per-request deadline when the caller sends no _meta.deadlineMs (§13.1)",
    )
    gateway.add_argument("--max-batch", type=int, default=1024)
    gateway.add_argument("--max-line-bytes", type=int, default=16 * 1024 * 1024)
    gateway.add_argument(
        "--log-level", default=os.environ.get("RCPKIT_LOG_LEVEL", "WARNING"), help="stderr level"
    )
    add_http_arguments(parser)
    add_observe_arguments(parser)
