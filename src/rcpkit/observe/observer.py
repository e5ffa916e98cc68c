"""The runtime's observer: every answered request is counted, timed and (optionally) logged.

The dispatcher hands each request's reply sink to :meth:`Observer.wrap`; the
wrapped sink reads the answer's envelope (its error code, and ``usage.stages``
of a result, without decoding the rest) before passing it on. So the observer
sees exactly what the caller sees, whichever path answered (a handler, the
session, a deadline, a cancel), and the dispatcher's logic is untouched.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import msgspec

from rcpkit.codec import Request
from rcpkit.observe.access import CURRENT_EXCHANGE, AccessLog, AccessRecord
from rcpkit.observe.metrics import Metrics
from rcpkit.observe.redact import redact
from rcpkit.observe.trace import TRACE_KEY, new_trace_id, trace_id_of

__all__ = ["Observer"]

Reply = Callable[[bytes], None]
_MAX_SERIES = 4096


class _Usage(msgspec.Struct):
    stages: dict[str, float] | None = None


class _Result(msgspec.Struct):
    usage: _Usage | None = None


class _Error(msgspec.Struct):
    code: int = 0


class _Envelope(msgspec.Struct):
    error: _Error | None = None
    result: msgspec.Raw = msgspec.Raw(b"")


_decode_envelope = msgspec.json.Decoder(_Envelope).decode
_decode_result = msgspec.json.Decoder(_Result).decode


class Observer:
    """Metrics (optional), an access log (optional) and trace ids, for one server."""

    def __init__(
        self,
        metrics: Metrics | None = None,
        access: AccessLog | None = None,
        *,
        public_metrics: bool = False,
    ) -> None:
        self.metrics = metrics
        self.access = access
        # Served on the public port at GET /metrics, behind its auth (else: own listener).
        self.public_metrics = public_metrics and metrics is not None
        self._series: dict[tuple[str, int], tuple[Any, Any, Any]] = {}

    # --- one RCP request ---

    def wrap(self, request: Request, tenant: str | None, reply: Reply) -> Reply:
        """``reply``, observed: call it with the request's one answer."""
        trace_id = _ensure_trace_id(request)
        started = time.perf_counter()
        query = self._query(request.params)
        if self.metrics is not None:
            self.metrics.in_flight.inc()
        done = False

        def observed(data: bytes) -> None:
            nonlocal done
            if not done:
                done = True
                self._finished(request.method, data, started, tenant, trace_id, query)
            reply(data)

        return observed

    def answered(self, method: str, data: bytes, tenant: str | None = None) -> None:
        """A request the transport answered itself (HTTP's ping/info fast path)."""
        if self.metrics is not None:
            self.metrics.in_flight.inc()
        self._finished(method, data, time.perf_counter(), tenant, None, None)

    def _finished(
        self,
        method: str,
        data: bytes,
        started: float,
        tenant: str | None,
        trace_id: str | None,
        query: str | None,
    ) -> None:
        seconds = time.perf_counter() - started
        code, stages = _outcome(data)
        metrics = self.metrics
        if metrics is not None:
            metrics.in_flight.dec()
            counted, errors, latency = self._children(metrics, method, code)
            counted.inc()
            if errors is not None:
                errors.inc()
            latency.observe(seconds)
            for stage, ms in (stages or {}).items():
                metrics.stages.labels(method, stage).observe(ms / 1000.0)
        if self.access is None:
            return
        exchange = CURRENT_EXCHANGE.get()
        if exchange is not None:  # HTTP: the exchange writes one line, with its status
            _merge(exchange, method, code, tenant, trace_id, query)
            return
        record = AccessRecord(method, code, tenant, trace_id, query, started=started)
        self.access.write(record)

    def _children(self, metrics: Metrics, method: str, code: int) -> tuple[Any, Any, Any]:
        """The labelled series of (method, code), looked up once (a hot path)."""
        key = (method, code)
        found = self._series.get(key)
        if found is None:
            label = str(code)
            found = (
                metrics.requests.labels(method, label),
                metrics.errors.labels(method, label) if code != 0 else None,
                metrics.latency.labels(method),
            )
            if len(self._series) < _MAX_SERIES:  # methods and codes are bounded; be sure
                self._series[key] = found
        return found

    def _query(self, params: dict[str, Any]) -> str | None:
        if self.access is None or not self.access.log_queries:
            return None
        query = params.get("query")
        if isinstance(query, dict):
            query = query.get("text")
        return redact(query) if isinstance(query, str) else None

    # --- the HTTP transport ---

    def http_done(self, record: AccessRecord, status: int) -> None:
        """One HTTP exchange ended with ``status``: count it, write its access line."""
        if self.metrics is not None:
            self.metrics.http.labels(str(status)).inc()
        if self.access is not None:
            record.status = status
            self.access.write(record)

    def shed(self, reason: str) -> None:
        """§15.5: a request refused under load (rate, caller in flight, capacity, sessions)."""
        if self.metrics is not None:
            self.metrics.shed.labels(reason).inc()


def _ensure_trace_id(request: Request) -> str | None:
    """``_meta.traceId`` of the request, minted when absent so handlers (a gateway) pass it on."""
    meta = request.params.get("_meta")
    if meta is None:
        meta = request.params["_meta"] = {}
    if not isinstance(meta, dict):
        return None  # malformed: the session answers it, nothing to trace
    trace_id = trace_id_of(meta)
    if trace_id is None:
        trace_id = meta[TRACE_KEY] = new_trace_id()
    return trace_id


def _outcome(data: bytes) -> tuple[int, dict[str, float] | None]:
    """The answer's error code (0 for a result) and its ``usage.stages``, if any."""
    try:
        envelope = _decode_envelope(data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return -1, None  # a batch (not ours to count here) or an unreadable frame
    if envelope.error is not None:
        return envelope.error.code, None
    if not envelope.result:
        return 0, None
    try:
        usage = _decode_result(envelope.result).usage
    except (msgspec.DecodeError, msgspec.ValidationError):
        return 0, None
    return 0, usage.stages if usage is not None else None


def _merge(
    record: AccessRecord,
    method: str,
    code: int,
    tenant: str | None,
    trace_id: str | None,
    query: str | None,
) -> None:
    record.calls += 1
    record.method = method if record.calls == 1 else "batch"
    if record.code in (None, 0):
        record.code = code
    record.tenant = record.tenant or tenant
    record.trace_id = record.trace_id or trace_id
    record.query = record.query if record.query is not None else query
