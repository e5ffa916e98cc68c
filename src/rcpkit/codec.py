"""The wire codec: bytes of one frame ⇄ JSON-RPC envelopes (§4, §11).

It knows JSON-RPC, not RCP methods: a frame decodes to a Request, a
Notification, a Response, an Invalid member (answered with an error) or a
Batch of those. A parse failure is a value (Invalid with id null), never an
exception (STYLE §2).
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from typing import Any, TypeGuard

import msgspec

from rcpkit.protocol.base import Id
from rcpkit.protocol.errors import ErrorCode, RCPError

__all__ = [
    "MAX_DEPTH",
    "Batch",
    "Frame",
    "Invalid",
    "Message",
    "Notification",
    "Request",
    "Response",
    "decode",
    "encode_batch",
    "encode_error",
    "encode_notification",
    "encode_request",
    "encode_result",
    "finite",
    "is_id",
]


@dataclass(slots=True)
class Request:
    id: Id
    method: str
    params: dict[str, Any]
    # True when the decoder proved ``params`` nests no deeper than MAX_DEPTH (its
    # frame holds fewer brackets than that), so the session need not walk it.
    shallow: bool = False

    @property
    def meta(self) -> dict[str, Any]:
        """§4.4: the request's ``_meta`` object (empty when absent or malformed)."""
        meta = self.params.get("_meta")
        return meta if isinstance(meta, dict) else {}


@dataclass(slots=True)
class Notification:
    method: str
    params: dict[str, Any]


@dataclass(slots=True)
class Response:
    id: Id | None
    result: Any = None
    error: dict[str, Any] | None = None


@dataclass(slots=True)
class Invalid:
    """A frame or batch member that must be answered with ``error`` (id may be null)."""

    id: Id | None
    error: RCPError


@dataclass(slots=True)
class Batch:
    members: list[Message] = field(default_factory=list)


Message = Request | Notification | Response | Invalid
Frame = Message | Batch

_decoder = msgspec.json.Decoder()
_encoder = msgspec.json.Encoder()


def decode(data: bytes | str) -> Frame:
    """Decode one frame. Never raises: bad input becomes an Invalid value."""
    try:
        value = _decoder.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError, UnicodeError):
        # Invalid JSON, invalid UTF-8, lone surrogates, 1e400.
        return Invalid(None, RCPError(ErrorCode.PARSE_ERROR, "parse error: invalid JSON"))
    except RecursionError:
        # Valid JSON nesting past what the decoder can hold (far beyond MAX_DEPTH):
        # a server limit (§12 -32013), like an oversized line; no id can be read.
        return Invalid(
            None,
            RCPError(
                ErrorCode.PAYLOAD_TOO_LARGE,
                f"message nests deeper than the limit of {MAX_DEPTH} levels",
                extra={"limit": MAX_DEPTH},
            ),
        )
    # A frame with fewer brackets than the depth bound cannot nest past it:
    # one C-speed count spares the session a walk over every params tree.
    shallow = _brackets(data) <= MAX_DEPTH
    if isinstance(value, list):
        if not value:
            # §11: an empty batch is a single (non-array) -32600 with id null.
            return Invalid(None, RCPError(ErrorCode.INVALID_REQUEST, "empty batch"))
        return Batch([classify(member, shallow=shallow) for member in value])
    return classify(value, shallow=shallow)


# How deep a request's params may nest (§15.5 operational bound); deeper is
# -32602 at the session, before any recursive code sees the tree.
MAX_DEPTH = 64


def _brackets(data: bytes | str) -> int:
    if isinstance(data, str):
        return data.count("{") + data.count("[")
    return data.count(b"{") + data.count(b"[")


def classify(value: Any, *, shallow: bool = False) -> Message:
    """Classify one decoded JSON value as a JSON-RPC 2.0 message."""
    if not isinstance(value, dict):
        return _invalid(None, "a message is a JSON object")
    raw_id = value.get("id", _ABSENT)
    has_id = raw_id is not _ABSENT
    id_ok = has_id and is_id(raw_id)
    echo_id: Id | None = raw_id if id_ok else None
    if value.get("jsonrpc") != "2.0":
        return _invalid(echo_id, '`jsonrpc` must be "2.0"')
    if "method" not in value:
        if "result" in value or "error" in value:
            error = value.get("error")
            return Response(
                echo_id, value.get("result"), error if isinstance(error, dict) else None
            )
        return _invalid(echo_id, "a request carries `method`")
    method = value["method"]
    if not isinstance(method, str):
        return _invalid(echo_id, "`method` must be a string")
    if has_id and not id_ok:
        # §4.7: a request id is a string or number, never null or boolean.
        return _invalid(None, "`id` must be a string or a number")
    params = value.get("params", _ABSENT)
    if params is _ABSENT or params is None:
        params = {}
    elif not isinstance(params, dict):
        # §4.1: RCP does not use positional parameters.
        if not has_id:
            return Notification(method, {})
        return Invalid(
            echo_id,
            RCPError(ErrorCode.INVALID_PARAMS, "`params` must be an object", field="params"),
        )
    if not has_id:
        return Notification(method, params)
    assert echo_id is not None
    return Request(echo_id, method, params, shallow)


_ABSENT: Any = object()


def is_id(value: object) -> TypeGuard[Id]:
    if isinstance(value, bool):
        return False
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, str | int)


def _invalid(id: Id | None, message: str) -> Invalid:
    return Invalid(id, RCPError(ErrorCode.INVALID_REQUEST, f"invalid request: {message}"))


# --- encoding ---

_MAX_FLOAT = sys.float_info.max


def finite(value: Any) -> Any:
    """§4.6: replace NaN/±Infinity (anywhere in a builtins tree) with finite sentinels."""
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        if math.isnan(value):
            return 0.0
        return _MAX_FLOAT if value > 0 else -_MAX_FLOAT
    if isinstance(value, dict):
        return {key: finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [finite(item) for item in value]
    return value


def _encode(message: dict[str, Any]) -> bytes:
    data = _encoder.encode(message)
    # msgspec writes NaN/Infinity as `null`; our structs omit absent fields, so
    # `null` is rare and a cheap signal to take the slow, sanitising path.
    if b"null" in data:
        data = _encoder.encode(finite(msgspec.to_builtins(message)))
    return data


def encode_result(id: Id, result: Any) -> bytes:
    """A success response. Raises TypeError/UnicodeError for an unencodable result."""
    return _encode({"jsonrpc": "2.0", "id": id, "result": result})


def encode_error(id: Id | None, error: RCPError) -> bytes:
    return _encoder.encode({"jsonrpc": "2.0", "id": id, "error": finite(error.to_wire())})


def encode_notification(method: str, params: Any) -> bytes:
    return _encode({"jsonrpc": "2.0", "method": method, "params": params})


def encode_request(id: Id, method: str, params: Any) -> bytes:
    return _encode({"jsonrpc": "2.0", "id": id, "method": method, "params": params})


def encode_batch(responses: list[bytes]) -> bytes:
    """§11: one array holding already-encoded responses."""
    return b"[" + b",".join(responses) + b"]"
