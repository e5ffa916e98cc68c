"""Observability: Prometheus metrics, structured access logs and trace ids (§15.6, §17.2).

>>> observer = Observer(Metrics(), AccessLog(sys.stderr))
>>> await serve(server, transport, observer=observer)

Nothing here changes what a request does: the runtime reports each request's
method, code, latency and stage timings to the :class:`Observer`, which counts
them (``/metrics``) and writes one JSON line per request (no query or document
text unless the operator opts in, §15.6). ``prometheus-client`` is the
``observe`` extra; without it an Observer still logs and traces.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rcpkit._lazy import lazy_exports

if TYPE_CHECKING:
    from rcpkit.observe.access import AccessLog, AccessRecord
    from rcpkit.observe.observer import Observer
    from rcpkit.observe.trace import TRACE_KEY, new_trace_id, trace_id_of_traceparent

# Imported on first use (rcpkit._lazy): importing the package stays cheap, and
# the observer pulls in msgspec, the codec and prometheus-client.
__getattr__ = lazy_exports(
    __name__,
    {
        "access": ("AccessLog", "AccessRecord"),
        "observer": ("Observer",),
        "trace": ("TRACE_KEY", "new_trace_id", "trace_id_of_traceparent"),
    },
)

__all__ = [
    "TRACE_KEY",
    "AccessLog",
    "AccessRecord",
    "Observer",
    "new_trace_id",
    "trace_id_of_traceparent",
]
