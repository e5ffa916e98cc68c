"""The observability options of ``rcpkit serve`` and ``rcpkit gateway``, → ObserveConfig."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rcpkit.observe.observer import Observer
    from rcpkit.observe.serving import MetricsPlacement

__all__ = ["add_observe_arguments", "observer_from_args"]


def observer_from_args(args: argparse.Namespace) -> tuple[Observer | None, MetricsPlacement]:
    """The Observer the options ask for (None: none), and where its own listener binds."""
    from rcpkit.observe.serving import ObserveConfig, build_observer

    config = ObserveConfig(
        metrics=getattr(args, "metrics", None),
        access_log=getattr(args, "access_log", None),
        log_queries=bool(getattr(args, "log_queries", False)),
    )
    return build_observer(config, over_http=getattr(args, "http", None) is not None)


def add_observe_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("observability (metrics, access logs, traces)")
    group.add_argument(
        "--metrics",
        default=None,
        metavar="[HOST:]PORT|public",
        help="Prometheus /metrics: on a listener of its own (HOST defaults to 127.0.0.1), "
        "or 'public': GET /metrics on the --http port, behind the same auth "
        "(needs the `observe` extra)",
    )
    group.add_argument(
        "--access-log",
        default=None,
        metavar="PATH|-",
        help="one JSON line per request (method, status, code, latency, tenant, trace id) "
        "to PATH, or '-' for stderr; no query text (§15.6)",
    )
    group.add_argument(
        "--log-queries",
        action="store_true",
        help="add the query text, redacted, to access lines (implies --access-log -)",
    )
