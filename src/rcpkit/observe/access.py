"""Structured access logs: one JSON line per request (§15.6: no query text by default).

A line carries the method, the HTTP status (HTTP only), the RCP code (0 for a
result), the latency, the tenant and the trace id. With ``log_queries`` the
query text is added, redacted (:func:`rcpkit.observe.redact.redact`); document
text is never logged.
"""

from __future__ import annotations

import contextvars
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import IO, Any

import msgspec

__all__ = ["CURRENT_EXCHANGE", "AccessLog", "AccessRecord"]


@dataclass(slots=True)
class AccessRecord:
    """What one access-log line says; filled in as the request goes."""

    method: str | None = None
    code: int | None = None
    tenant: str | None = None
    trace_id: str | None = None
    query: str | None = None
    status: int | None = None
    calls: int = 0
    started: float = field(default_factory=time.perf_counter)

    def to_line(self) -> dict[str, Any]:
        line: dict[str, Any] = {
            "ts": round(time.time(), 3),
            "method": self.method,
            "code": self.code,
            "latencyMs": round((time.perf_counter() - self.started) * 1000, 3),
            "tenant": self.tenant,
            "traceId": self.trace_id,
        }
        if self.status is not None:
            line["status"] = self.status
        if self.calls > 1:
            line["calls"] = self.calls
        if self.query is not None:
            line["query"] = self.query
        return line


# The HTTP exchange a request belongs to: its requests fill in this one record,
# and the exchange writes it once, with the HTTP status (one line per HTTP request).
CURRENT_EXCHANGE: contextvars.ContextVar[AccessRecord | None] = contextvars.ContextVar(
    "rcpkit_access_exchange", default=None
)


class AccessLog:
    """Writes access lines to a text stream (stderr by default), one whole line at a time."""

    def __init__(self, stream: IO[str] | None = None, *, log_queries: bool = False) -> None:
        self._stream = stream
        self.log_queries = log_queries
        self._lock = threading.Lock()
        self._encode = msgspec.json.Encoder().encode

    def write(self, record: AccessRecord) -> None:
        line = self._encode(record.to_line()).decode() + "\n"
        stream = self._stream or sys.stderr
        with self._lock:
            try:
                stream.write(line)
                stream.flush()
            except (OSError, ValueError):  # a closed stream must not fail a request
                pass
