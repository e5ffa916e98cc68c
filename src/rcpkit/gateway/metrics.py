"""The gateway's per-engine metrics: every call timed, health read at scrape time."""

from __future__ import annotations

from rcpkit.federation.federation import Federation
from rcpkit.observe.metrics import GaugeValue, Metrics

__all__ = ["watch_engines"]

_HELP = {
    "rcp_engine_up": "1 while the gateway holds a live connection to the engine",
    "rcp_engine_demoted": "1 while the engine is demoted for being consistently slow",
    "rcp_engine_p50_seconds": "median of the engine's recent answer times",
}


def watch_engines(federation: Federation, metrics: Metrics) -> None:
    """Time every engine call into ``metrics``; expose up/demoted/p50 per engine."""

    def call(engine: str, method: str, seconds: float, code: int) -> None:
        metrics.engine_latency.labels(engine, method).observe(seconds)
        if code != 0:
            metrics.engine_failures.labels(engine, str(code)).inc()

    federation.pool.observer = call

    def health() -> dict[str, GaugeValue]:
        up: list[tuple[dict[str, str], float]] = []
        demoted: list[tuple[dict[str, str], float]] = []
        p50: list[tuple[dict[str, str], float]] = []
        for state in federation.engines:
            labels = {"engine": state.id}
            up.append((labels, 1.0 if state.live else 0.0))
            if state.health is not None:
                demoted.append((labels, 1.0 if state.health.demoted else 0.0))
                if state.health.p50_ms is not None:
                    p50.append((labels, state.health.p50_ms / 1000.0))
        return {"rcp_engine_up": up, "rcp_engine_demoted": demoted, "rcp_engine_p50_seconds": p50}

    metrics.add_gauges(health, _HELP)
