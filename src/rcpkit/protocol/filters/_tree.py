"""The typed, normalised filter tree that :func:`parse_filter` returns (§8)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

__all__ = [
    "OPERATORS",
    "And",
    "Clause",
    "ClauseValue",
    "FieldType",
    "Filter",
    "Not",
    "Operator",
    "Or",
    "Scalar",
]

# §8: the field types a server may advertise in `filter.fields`. "geo" may be
# declared (so an advertised capability type-checks) but no operator applies to it.
FieldType = Literal["keyword", "text", "int", "float", "bool", "date", "geo"]

# §8: the complete operator vocabulary, in the order the spec lists it.
Operator = Literal["eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "contains", "exists"]
OPERATORS: tuple[Operator, ...] = (
    "eq",
    "ne",
    "gt",
    "gte",
    "lt",
    "lte",
    "in",
    "nin",
    "contains",
    "exists",
)

# A normalised scalar: dates are epoch-ms ints, float-field numbers are floats.
Scalar: TypeAlias = str | int | float | bool
# `in`/`nin` carry a de-duplicated tuple; `exists` carries a bool.
ClauseValue: TypeAlias = Scalar | tuple[Scalar, ...]


@dataclass(frozen=True, slots=True)
class Clause:
    """A leaf: ``field op value``, with the advertised type of ``field`` attached.

    ``field_type`` travels with the clause so that evaluators and compilers need
    nothing but the tree (a ``text`` ``contains`` is a substring test, a
    ``keyword`` one is not).
    """

    field: str
    op: Operator
    value: ClauseValue
    field_type: FieldType


@dataclass(frozen=True, slots=True)
class And:
    """True when every child is (never empty: §8 rejects an empty ``and``)."""

    children: tuple[Filter, ...]


@dataclass(frozen=True, slots=True)
class Or:
    """True when any child is (never empty: §8 rejects an empty ``or``)."""

    children: tuple[Filter, ...]


@dataclass(frozen=True, slots=True)
class Not:
    """True when the child is not."""

    child: Filter


Filter: TypeAlias = Clause | And | Or | Not
