"""Between typed structs and the wire: params out (validated), results and capabilities in."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any, TypeVar

import msgspec

from rcpkit.client.channel import Channel
from rcpkit.client.errors import MalformedResult
from rcpkit.client.http import HttpChannel, HttpEndpoint
from rcpkit.client.stdio import StdioChannel, StdioEndpoint
from rcpkit.protocol.base import Wire
from rcpkit.protocol.capabilities import Capabilities
from rcpkit.protocol.errors import RCPError
from rcpkit.protocol.methods import METHODS, MethodSpec
from rcpkit.protocol.validation import parse_params

__all__ = [
    "BY_PARAMS",
    "Endpoint",
    "open_channel",
    "parse_result",
    "to_wire",
    "typed_capabilities",
]

R = TypeVar("R", bound=Wire)
Endpoint = StdioEndpoint | HttpEndpoint
# The method whose params type a struct is (STYLE §4: read from the registry).
BY_PARAMS: dict[type[Wire], MethodSpec] = {spec.params: spec for spec in METHODS.values()}


def open_channel(endpoint: Endpoint | Channel) -> Channel:
    """The channel for an endpoint description (a Channel is used as it is)."""
    if isinstance(endpoint, StdioEndpoint):
        return StdioChannel(endpoint)
    if isinstance(endpoint, HttpEndpoint):
        return HttpChannel(endpoint)
    return endpoint


def to_wire(method: str, params: Wire) -> dict[str, Any]:
    """A params struct as its wire object, validated before any I/O (-32602 naming the field)."""
    spec = METHODS[method]
    try:
        wire: dict[str, Any] = msgspec.to_builtins(params)
    except (TypeError, ValueError) as error:
        raise RCPError.invalid_params("params", f"params are not JSON: {error}") from None
    parse_params(spec.params, wire)
    return wire


def parse_result(method: str, result_type: type[R], raw: Any) -> R:
    """The typed result; unknown fields are ignored (§4.6), a wrong shape is an error."""
    try:
        return msgspec.convert({} if raw is None else raw, result_type, strict=False)
    except msgspec.ValidationError as error:
        raise MalformedResult(method, str(error)) from None


def typed_capabilities(raw: Mapping[str, Any]) -> Capabilities:
    """The advertised set as typed structs; a key whose metadata does not validate is left out
    here (it stays in ``raw_capabilities``, which gating reads)."""
    try:
        return msgspec.convert(dict(raw), Capabilities, strict=False)
    except msgspec.ValidationError:
        pass
    valid: dict[str, Any] = {}
    for key, value in raw.items():
        with contextlib.suppress(msgspec.ValidationError):
            msgspec.convert({key: value}, Capabilities, strict=False)
            valid[key] = value
    return msgspec.convert(valid, Capabilities, strict=False)
