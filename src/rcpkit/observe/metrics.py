"""Prometheus metrics of one server process (``prometheus-client``, the ``observe`` extra).

Each :class:`Metrics` owns its registry (two servers in one process never
share counters). Names follow Prometheus conventions: ``rcp_`` prefix,
seconds, ``_total`` counters.

Under ``rcpkit serve --workers N`` every worker process writes its values to
the folder ``$PROMETHEUS_MULTIPROC_DIR`` (prometheus-client's multiprocess
mode, chosen when the library is imported), and a scrape of any worker sums
them, so ``/metrics`` describes the whole server, not the worker that answered.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["CONTENT_TYPE", "Metrics"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
_MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"

# Latencies from a cached ping (~50 µs) to a slow rerank (~30 s).
_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)

# name -> a value, or (labels, value) pairs of one labelled gauge
GaugeValue = float | list[tuple[dict[str, str], float]]
Gauges = Callable[[], Mapping[str, GaugeValue]]


def _require() -> Any:
    try:
        import prometheus_client
    except ImportError:  # pragma: no cover - depends on the installed extras
        raise RuntimeError(
            "metrics need prometheus-client: pip install 'rcpkit[observe]'"
        ) from None
    return prometheus_client


class Metrics:
    """Counters, gauges and histograms of requests, stages, load shedding and engines."""

    def __init__(self) -> None:
        prom = _require()
        self._prom = prom
        self.registry = prom.CollectorRegistry(auto_describe=True)
        r = self.registry
        self.requests = prom.Counter(
            "rcp_requests", "RCP requests answered", ["method", "code"], registry=r
        )
        self.errors = prom.Counter(
            "rcp_request_errors",
            "RCP requests answered with an error",
            ["method", "code"],
            registry=r,
        )
        self.latency = prom.Histogram(
            "rcp_request_duration_seconds",
            "time to answer, per method",
            ["method"],
            buckets=_BUCKETS,
            registry=r,
        )
        self.stages = prom.Histogram(
            "rcp_stage_duration_seconds",
            "pipeline stage time (usage.stages)",
            ["method", "stage"],
            buckets=_BUCKETS,
            registry=r,
        )
        self.in_flight = prom.Gauge(
            "rcp_requests_in_flight",
            "requests not yet answered",
            registry=r,
            multiprocess_mode="livesum",  # summed over the live workers
        )
        self.http = prom.Counter(
            "rcp_http_responses", "HTTP responses by status", ["status"], registry=r
        )
        self.shed = prom.Counter(
            "rcp_shed", "requests refused under load (429/503)", ["reason"], registry=r
        )
        self.engine_latency = prom.Histogram(
            "rcp_engine_duration_seconds",
            "time an engine took to answer the gateway",
            ["engine", "method"],
            buckets=_BUCKETS,
            registry=r,
        )
        self.engine_failures = prom.Counter(
            "rcp_engine_failures",
            "engine calls that failed or timed out",
            ["engine", "code"],
            registry=r,
        )
        self._gauges: list[tuple[Gauges, dict[str, Any]]] = []
        self._collector_registered = False

    def add_gauges(self, source: Gauges, help: Mapping[str, str] | None = None) -> None:
        """Gauges read at scrape time: ``source()`` maps metric names to values
        (e.g. ``rcp_index_documents``); a failing source is skipped, never fatal."""
        self._gauges.append((source, dict(help or {})))
        if not self._collector_registered:
            self.registry.register(_Scraped(self))
            self._collector_registered = True

    def render(self) -> bytes:
        data: bytes = self._prom.generate_latest(self._scrape_registry())
        return data

    def _scrape_registry(self) -> Any:
        folder = os.environ.get(_MULTIPROC_ENV)
        if not folder:
            return self.registry
        from prometheus_client import multiprocess

        merged = self._prom.CollectorRegistry(auto_describe=True)
        multiprocess.MultiProcessCollector(merged, path=folder)  # type: ignore[no-untyped-call]
        if self._gauges:  # read from the index, the same in every worker
            merged.register(_Scraped(self))
        return merged

    def scraped(self) -> Iterable[Any]:
        import prometheus_client.core as core

        for source, helps in self._gauges:
            try:
                values = dict(source())
            except Exception:  # a gauge source must not break a scrape
                continue
            for name, value in values.items():
                if not isinstance(value, list):
                    yield core.GaugeMetricFamily(name, helps.get(name, name), value=float(value))
                    continue
                names = sorted({label for labels, _ in value for label in labels})
                family = core.GaugeMetricFamily(name, helps.get(name, name), labels=names)
                for labels, number in value:
                    family.add_metric([labels.get(label, "") for label in names], float(number))
                yield family


class _Scraped:
    def __init__(self, metrics: Metrics) -> None:
        self._metrics = metrics

    def collect(self) -> Iterable[Any]:
        return self._metrics.scraped()

    def describe(self) -> list[Any]:
        return []  # read at scrape time only
