"""Params validation: a raw params object → its typed struct, or -32602 naming the field."""

from __future__ import annotations

import re
from typing import Any, TypeVar

import msgspec

from rcpkit.protocol.errors import ErrorCode, RCPError

__all__ = ["check_depth", "clamp", "drop_nulls", "parse_params"]

T = TypeVar("T")

_AT_PATH = re.compile(r" - at `\$(?P<path>[^`]*)`$")
_MISSING = re.compile(r"^Object missing required field `(?P<name>[^`]+)`")


def check_depth(params: dict[str, Any], limit: int) -> None:
    """Raise -32602 naming the params member that nests deeper than ``limit``.

    Iterative, so no input depth can exhaust the stack (a RecursionError
    would otherwise surface as -32603 from the first recursive consumer).
    """
    for name, value in params.items():
        stack: list[tuple[Any, int]] = [(value, 1)]
        while stack:
            item, depth = stack.pop()
            if depth > limit:
                raise RCPError.invalid_params(name, f"`{name}` nests deeper than {limit} levels")
            if isinstance(item, dict):
                stack.extend((child, depth + 1) for child in item.values())
            elif isinstance(item, list):
                stack.extend((child, depth + 1) for child in item)


def drop_nulls(value: Any) -> Any:
    """§4.6: an explicit ``null`` is treated as absent, so null-valued members go."""
    if isinstance(value, dict):
        if any(item is None or isinstance(item, dict | list) for item in value.values()):
            return {key: drop_nulls(item) for key, item in value.items() if item is not None}
        return value
    if isinstance(value, list):
        if any(isinstance(item, dict | list) for item in value):
            return [drop_nulls(item) for item in value]
        return value
    return value


def parse_params(params_type: type[T], raw: dict[str, Any]) -> T:
    """Validate ``raw`` (``_meta`` and unknown fields ignored) into ``params_type``.

    Raises RCPError(-32602) whose ``data.field`` is the offending params path
    (``fusion.alpha``, ``filter.and[0]``) and whose message carries no library text.
    """
    try:
        return msgspec.convert(drop_nulls(raw), params_type)
    except msgspec.ValidationError as error:
        field, reason = _describe(str(error))
        raise RCPError(ErrorCode.INVALID_PARAMS, reason, field=field) from None
    except RecursionError:
        # A caller that skipped check_depth (an in-process Request) still gets -32602.
        raise RCPError.invalid_params("params", "params nest too deeply") from None


def _describe(text: str) -> tuple[str, str]:
    path = ""
    match = _AT_PATH.search(text)
    if match:
        path = match["path"].lstrip(".")
        text = text[: match.start()]
    missing = _MISSING.match(text)
    if missing:
        name = missing["name"]
        field = f"{path}.{name}" if path else name
        return field, f"missing required field `{field}`"
    field = path or "params"
    return field, f"invalid `{field}`: {_reason(text)}"


def _reason(text: str) -> str:
    # msgspec's wording is already neutral ("Expected `int`, got `str`");
    # lower-case it so it reads as part of our sentence.
    return text[:1].lower() + text[1:] if text else "invalid value"


def clamp(value: int | None, limit: int | None) -> int | None:
    """§12: a well-formed value above an advertised limit is clamped, not rejected."""
    if value is None or limit is None:
        return value
    return min(value, limit)
