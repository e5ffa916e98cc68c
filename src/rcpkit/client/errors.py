"""Errors the client raises on its own side of the wire.

Every one is an :class:`RCPError`, so ``except RCPError`` catches a refusal
whether the server sent it or the client decided it before any I/O.
"""

from __future__ import annotations

from rcpkit.protocol.errors import ErrorCode, RCPError

__all__ = [
    "CapabilityMissing",
    "DeadlineExceeded",
    "MalformedResult",
    "OptionUnsupported",
    "TransportClosed",
    "VersionUnsupported",
]


class CapabilityMissing(RCPError):
    """§14.4: the method's capability is not advertised; raised before any I/O."""

    def __init__(self, method: str, capability: str) -> None:
        super().__init__(
            ErrorCode.CAPABILITY_MISSING,
            f"`{method}` needs capability `{capability}`, which the server does not advertise",
        )
        self.method = method
        self.capability = capability


class OptionUnsupported(RCPError):
    """§14.4: an option value the server did not advertise; raised before any I/O."""

    def __init__(self, method: str, option: str, value: object) -> None:
        super().__init__(
            ErrorCode.OPTION_UNSUPPORTED,
            f"`{method}` option `{option}` {value!r} is not advertised",
            option=option,
        )
        self.method = method


class TransportClosed(RCPError):
    """§13.1: the transport died; every in-flight call fails with this.

    Whether a failed call took effect is unknown, so it is never retried here.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(ErrorCode.BACKEND_UNAVAILABLE, f"transport closed: {reason}")
        self.reason = reason


class DeadlineExceeded(RCPError, TimeoutError):
    """§13.1: the client's own deadline elapsed; a late answer is discarded."""

    def __init__(self, method: str, seconds: float) -> None:
        super().__init__(
            ErrorCode.TIMEOUT, f"`{method}` got no answer within {seconds:.3g} s (client deadline)"
        )
        self.method = method


class VersionUnsupported(RCPError):
    """§7.1: the negotiated protocol version is outside what this client speaks."""

    def __init__(self, negotiated: object, supported: tuple[int, int]) -> None:
        low, high = supported
        super().__init__(
            ErrorCode.VERSION_MISMATCH,
            f"server negotiated protocol version {negotiated!r}; this client speaks {low}..{high}",
        )


class MalformedResult(RCPError):
    """The server's result does not have the shape §7 gives the method."""

    def __init__(self, method: str, detail: str) -> None:
        super().__init__(
            ErrorCode.INTERNAL_ERROR, f"`{method}` returned a malformed result", detail=detail
        )
