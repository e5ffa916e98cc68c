"""Error codes of §12 and the one exception type handlers raise.

Every failure that reaches the wire is built from :class:`RCPError` in exactly
one place (the dispatcher); handlers and validators only raise it.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any

__all__ = ["ErrorCode", "RCPError", "is_retryable"]


class ErrorCode(IntEnum):
    """§12: every JSON-RPC and RCP error code, by its symbol."""

    PARSE_ERROR = -32700
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601  # reserved; RCP prefers UNKNOWN_METHOD
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603
    NOT_INITIALIZED = -32001
    VERSION_MISMATCH = -32002
    CAPABILITY_MISSING = -32003
    UNKNOWN_METHOD = -32004
    OPTION_UNSUPPORTED = -32005
    CANCELLED = -32006
    BACKEND_UNAVAILABLE = -32010
    RATE_LIMITED = -32011
    UNAUTHORIZED = -32012
    PAYLOAD_TOO_LARGE = -32013
    TIMEOUT = -32014
    NOT_FOUND = -32015
    CONFLICT = -32016


# §12.2: codes a client may retry unchanged (INTERNAL_ERROR and CONFLICT are
# "maybe": they are retried at most once by policy, not by this table).
_RETRYABLE = frozenset(
    {
        ErrorCode.RATE_LIMITED,
        ErrorCode.BACKEND_UNAVAILABLE,
        ErrorCode.TIMEOUT,
    }
)


def is_retryable(code: int) -> bool:
    """§12.2: whether an identical retry of a request failing with ``code`` may succeed."""
    return code in _RETRYABLE


class RCPError(Exception):
    """A protocol error: code, human message and the §12.1 ``error.data`` fields.

    ``field`` names the offending params path (for -32602), ``option`` the
    unsupported mode/method (for -32005), ``retry_after_ms`` a back-off hint.
    """

    def __init__(
        self,
        code: int,
        message: str,
        *,
        field: str | None = None,
        option: str | None = None,
        retryable: bool | None = None,
        retry_after_ms: int | None = None,
        detail: str | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = int(code)
        self.message = message
        self.field = field
        self.option = option
        self.retryable = retryable
        self.retry_after_ms = retry_after_ms
        self.detail = detail
        self.extra = extra

    @property
    def data(self) -> dict[str, Any] | None:
        """The §12.1 ``error.data`` object, or None when there is nothing to say."""
        data: dict[str, Any] = dict(self.extra or {})
        for key, value in (
            ("field", self.field),
            ("option", self.option),
            ("retryable", self.retryable),
            ("retryAfterMs", self.retry_after_ms),
            ("detail", self.detail),
        ):
            if value is not None:
                data[key] = value
        return data or None

    def to_wire(self) -> dict[str, Any]:
        """The JSON-RPC ``error`` member."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        data = self.data
        if data is not None:
            error["data"] = data
        return error

    @classmethod
    def from_wire(cls, error: dict[str, Any]) -> RCPError:
        """Rebuild an error received from a peer (tolerant of missing members)."""
        raw_data = error.get("data")
        data: dict[str, Any] = dict(raw_data) if isinstance(raw_data, dict) else {}
        code = error.get("code")
        message = error.get("message")
        retry_after = data.pop("retryAfterMs", None)
        retryable = data.pop("retryable", None)
        return cls(
            code if isinstance(code, int) and not isinstance(code, bool) else -32603,
            message if isinstance(message, str) else "error",
            field=_str_or_none(data.pop("field", None)),
            option=_str_or_none(data.pop("option", None)),
            retryable=retryable if isinstance(retryable, bool) else None,
            retry_after_ms=retry_after if isinstance(retry_after, int) else None,
            detail=_str_or_none(data.pop("detail", None)),
            extra=data or None,
        )

    def __repr__(self) -> str:
        return f"RCPError({self.code}, {self.message!r})"

    def __str__(self) -> str:
        return f"[{self.code}] {self.message}"

    # Convenience constructors for the codes raised most often.

    @classmethod
    def invalid_params(cls, field: str, message: str) -> RCPError:
        return cls(ErrorCode.INVALID_PARAMS, message, field=field)

    @classmethod
    def option_unsupported(cls, option: str, message: str) -> RCPError:
        return cls(ErrorCode.OPTION_UNSUPPORTED, message, option=option)


def _str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None
