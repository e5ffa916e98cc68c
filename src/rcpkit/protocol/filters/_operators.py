"""§8's operator table: the value shape of each operator and the types it applies to.

Both evaluators read ``negates`` from here, so ``ne``/``nin`` mean the same thing
everywhere: the exact complement of ``eq``/``in``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from rcpkit.protocol.filters._tree import FieldType, Operator

__all__ = [
    "OPERATOR_RULES",
    "OperatorRule",
    "ValueShape",
    "applies",
    "is_filterable",
    "operators_for",
]

# "scalar": one value of the field's type; "array": a non-empty list of them;
# "flag": a JSON boolean whatever the field's type (`exists`).
ValueShape = Literal["scalar", "array", "flag"]

_ANY: frozenset[FieldType] = frozenset({"keyword", "text", "int", "float", "bool", "date"})
_ORDERED: frozenset[FieldType] = frozenset({"int", "float", "date"})
# §8: `contains` is a substring test on `text` and element membership on an
# array-valued field. A field type does not say whether a field holds arrays, so
# the server declares its array-valued fields (``on_arrays`` below); on any other
# `keyword` (or number, bool, date) field `contains` is "not allowed for that field".
_TEXT: frozenset[FieldType] = frozenset({"text"})


@dataclass(frozen=True, slots=True)
class OperatorRule:
    """What one operator accepts; ``negates`` names the operator it is the complement of."""

    shape: ValueShape
    applies_to: frozenset[FieldType]
    negates: Operator | None = None
    on_arrays: bool = False  # also applies to any filterable field declared array-valued


OPERATOR_RULES: Mapping[Operator, OperatorRule] = {
    "eq": OperatorRule("scalar", _ANY),
    "ne": OperatorRule("scalar", _ANY, negates="eq"),
    "gt": OperatorRule("scalar", _ORDERED),
    "gte": OperatorRule("scalar", _ORDERED),
    "lt": OperatorRule("scalar", _ORDERED),
    "lte": OperatorRule("scalar", _ORDERED),
    "in": OperatorRule("array", _ANY),
    "nin": OperatorRule("array", _ANY, negates="in"),
    "contains": OperatorRule("scalar", _TEXT, on_arrays=True),
    "exists": OperatorRule("flag", _ANY),
}


def is_filterable(field_type: str) -> bool:
    """Whether any operator applies to ``field_type`` (not to ``geo`` or unknown types)."""
    return any(field_type in rule.applies_to for rule in OPERATOR_RULES.values())


def applies(op: Operator, field_type: str, array_valued: bool) -> bool:
    """Whether ``op`` is allowed on a field of ``field_type`` (declared array-valued or not)."""
    rule = OPERATOR_RULES[op]
    if field_type in rule.applies_to:
        return True
    return rule.on_arrays and array_valued and is_filterable(field_type)


def operators_for(field_type: str, array_valued: bool = False) -> list[Operator]:
    """The §8 operators allowed on such a field, in the spec's order."""
    return [op for op in OPERATOR_RULES if applies(op, field_type, array_valued)]
