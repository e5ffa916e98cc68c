"""Per field type: which JSON values it holds and how they are normalised (§8, §4.6).

One coercer per type, shared by the filter parser (a mismatch is -32602) and by
:func:`normalize_meta` (a mismatch is dropped), so a stored value and a filter
value of the same field are always normalised the same way.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from rcpkit.protocol.filters._dates import MAX_SAFE_INTEGER, epoch_ms
from rcpkit.protocol.filters._tree import Scalar

__all__ = ["FIELD_KINDS", "FieldKind", "kind_of"]


@dataclass(frozen=True, slots=True)
class FieldKind:
    """How one field type reads a JSON scalar: ``coerce`` returns None on a mismatch."""

    coerce: Callable[[object], Scalar | None]
    expected: str  # completes "value must be …" in error messages


def _string(raw: object) -> str | None:
    # NUL is truncated by SQLite's JSON functions and lone surrogates are not
    # UTF-8 (§4.6), so neither could compare the same in every backend.
    if not isinstance(raw, str) or "\x00" in raw:
        return None
    try:
        raw.encode("utf-8")
    except UnicodeEncodeError:
        return None
    return raw


def _integer(raw: object) -> int | None:
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        return None  # §4.6: a boolean is never a number
    if isinstance(raw, float) and not raw.is_integer():
        return None  # §4.6: an integer is a number with no fractional part
    value = int(raw)
    return value if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER else None


def _float(raw: object) -> float | None:
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        return None
    if isinstance(raw, int):
        exact = _integer(raw)
        return None if exact is None else float(exact)
    return raw if math.isfinite(raw) else None


def _boolean(raw: object) -> bool | None:
    return raw if isinstance(raw, bool) else None


def _unsupported(raw: object) -> None:
    return None


# Keyed by str: an advertised type this module does not know is looked up too.
FIELD_KINDS: Mapping[str, FieldKind] = {
    "keyword": FieldKind(_string, "a string"),
    "text": FieldKind(_string, "a string"),
    "int": FieldKind(_integer, "an integer within ±(2^53-1)"),
    "float": FieldKind(_float, "a finite number"),
    "bool": FieldKind(_boolean, "true or false"),
    "date": FieldKind(epoch_ms, "an RFC 3339 timestamp or an epoch-ms integer"),
    "geo": FieldKind(_unsupported, "nothing: geo fields are not filterable here"),
}

_UNKNOWN = FieldKind(_unsupported, "nothing: the field type is not supported")


def kind_of(field_type: str) -> FieldKind:
    """The kind for ``field_type``; an unrecognised type accepts no value at all."""
    return FIELD_KINDS.get(field_type, _UNKNOWN)
