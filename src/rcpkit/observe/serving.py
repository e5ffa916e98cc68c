"""What to observe (typed) → an Observer, and serving with its metrics listener alongside.

The command line's ``--metrics``, ``--access-log`` and ``--log-queries``
(``cli/observe_options.py``) become an :class:`ObserveConfig`.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import IO, Any

from rcpkit.observe.access import AccessLog
from rcpkit.observe.observer import Observer

__all__ = ["MetricsPlacement", "ObserveConfig", "build_observer", "observed"]

MetricsPlacement = tuple[str, int] | None


@dataclass(frozen=True, slots=True)
class ObserveConfig:
    """What the operator asked to observe."""

    # Prometheus: "[HOST:]PORT" (a listener of its own) or "public" (the HTTP port).
    metrics: str | None = None
    # One JSON line per request to this path, or "-" for stderr.
    access_log: str | None = None
    # §15.6: the query text, redacted, in access lines (implies an access log).
    log_queries: bool = False


def build_observer(
    config: ObserveConfig, *, over_http: bool
) -> tuple[Observer | None, MetricsPlacement]:
    """The Observer ``config`` asks for (None: none), and where its own listener binds."""
    target, path, log_queries = config.metrics, config.access_log, config.log_queries
    if target is None and path is None and not log_queries:
        return None, None
    metrics = None
    placement: MetricsPlacement = None
    public = False
    if target is not None:
        from rcpkit.observe.metrics import Metrics

        metrics = Metrics()
        if target == "public":
            if not over_http:
                raise ValueError("--metrics public serves on the --http port: pass --http too")
            public = True
        else:
            placement = _bind(target)
    access = None
    if path is not None or log_queries:
        stream: IO[str] = sys.stderr if path in (None, "-") else open(path, "a")  # noqa: SIM115
        access = AccessLog(stream, log_queries=log_queries)
    return Observer(metrics, access, public_metrics=public), placement


async def observed(
    observer: Observer | None, placement: MetricsPlacement, main: Coroutine[Any, Any, None]
) -> None:
    """Run ``main`` with the metrics listener up (when it has one of its own)."""
    async with contextlib.AsyncExitStack() as stack:
        if observer is not None and observer.metrics is not None and placement is not None:
            from rcpkit.observe.listener import metrics_listener

            try:
                await stack.enter_async_context(metrics_listener(observer.metrics, *placement))
            except BaseException:
                main.close()  # never started: no "never awaited" warning
                raise
        await main


def _bind(value: str) -> tuple[str, int]:
    """``[HOST:]PORT`` (IPv6 bracketed); the host defaults to loopback (§15.1)."""
    host, _, port_text = value.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
        raise ValueError(f"--metrics takes [HOST:]PORT or 'public', not {value!r}")
    return host or "127.0.0.1", int(port_text)
