"""The server runtime's default operational bounds, shared by every transport.

Both the stdio runner and the HTTP transport read these, so a request gets the
same deadline and the same admission rule whichever way it arrived.

- ``DEFAULT_DEADLINE_SECONDS``: §13.1 "a server SHOULD apply a per-request
  deadline" — a request still running after this answers -32014. A client may
  ask for less with ``_meta.deadlineMs``, never for more.
- ``DEFAULT_WRITE_DEADLINE_SECONDS``: the floor for the methods the registry
  marks as writes (``index/add``, ``index/delete``, ``memory/build``): embedding
  a few thousand documents on a small machine takes minutes, not seconds.
- ``DEFAULT_MAX_IN_FLIGHT``: requests a connection may have running at once;
  beyond it a request is answered -32011 with ``data.retryAfterMs`` (§12, §15.5)
  instead of being queued without bound.
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_DEADLINE_SECONDS",
    "DEFAULT_MAX_IN_FLIGHT",
    "DEFAULT_WRITE_DEADLINE_SECONDS",
    "IN_FLIGHT_RETRY_AFTER_MS",
    "resolve_deadline",
]

DEFAULT_DEADLINE_SECONDS = 60.0
DEFAULT_WRITE_DEADLINE_SECONDS = 600.0
DEFAULT_MAX_IN_FLIGHT = 1024  # = the largest batch (§11), as over HTTP
IN_FLIGHT_RETRY_AFTER_MS = 50


def resolve_deadline(seconds: float | None) -> float | None:
    """An operator's ``--deadline``: None is the default, 0 or less means none at all."""
    if seconds is None:
        return DEFAULT_DEADLINE_SECONDS
    return seconds if seconds > 0 else None
