"""Trace correlation ids: ``_meta.traceId`` (§17.2) and W3C ``traceparent`` on HTTP."""

from __future__ import annotations

import re
import secrets

__all__ = ["TRACE_KEY", "new_trace_id", "trace_id_of", "trace_id_of_traceparent"]

# §17.2: trace correlation ids belong in `_meta`, never in a core field.
TRACE_KEY = "traceId"
_MAX_TRACE_ID = 128
# W3C Trace Context: version-traceid-parentid-flags, lower-case hex.
_TRACEPARENT = re.compile(r"^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})")


def new_trace_id() -> str:
    """A fresh id in W3C form (32 lower-case hex digits), so it maps back to ``traceparent``."""
    return secrets.token_hex(16)


def trace_id_of_traceparent(header: str | bytes | None) -> str | None:
    """The trace-id of a valid ``traceparent`` header, else None (W3C: all-zero is invalid)."""
    if header is None:
        return None
    text = header.decode("latin-1") if isinstance(header, bytes) else header
    match = _TRACEPARENT.match(text.strip())
    if match is None or match.group(1) == "ff":
        return None
    trace_id = match.group(2)
    if trace_id == "0" * 32 or match.group(3) == "0" * 16:
        return None
    return trace_id


def trace_id_of(meta: object) -> str | None:
    """``_meta.traceId`` when it is a sane string (bounded: it lands in every log line)."""
    if not isinstance(meta, dict):
        return None
    value = meta.get(TRACE_KEY)
    if isinstance(value, str) and 0 < len(value) <= _MAX_TRACE_ID and value.isprintable():
        return value
    return None
