"""§8's operator table: the value shape of each operator and the types it applies to.

Both evaluators read ``negates`` from here, so ``ne``/``nin`` mean the same thing
everywhere: the exact complement of ``eq``/``in``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from rcpkit.protocol.filters._tree import FieldType, Operator

__all__ = ["OPERATOR_RULES", "OperatorRule", "ValueShape", "is_filterable"]

# "scalar": one value of the field's type; "array": a non-empty list of them;
# "flag": a JSON boolean whatever the field's type (`exists`).
ValueShape = Literal["scalar", "array", "flag"]

_ANY: frozenset[FieldType] = frozenset({"keyword", "text", "int", "float", "bool", "date"})
_ORDERED: frozenset[FieldType] = frozenset({"int", "float", "date"})
# §8: `contains` is a substring test on `text` and element membership on an
# array-valued field. Only `keyword` fields are treated as possibly array-valued
# for `contains`; on a scalar keyword it is plain equality.
_CONTAINABLE: frozenset[FieldType] = frozenset({"keyword", "text"})


@dataclass(frozen=True, slots=True)
class OperatorRule:
    """What one operator accepts; ``negates`` names the operator it is the complement of."""

    shape: ValueShape
    applies_to: frozenset[FieldType]
    negates: Operator | None = None


OPERATOR_RULES: Mapping[Operator, OperatorRule] = {
    "eq": OperatorRule("scalar", _ANY),
    "ne": OperatorRule("scalar", _ANY, negates="eq"),
    "gt": OperatorRule("scalar", _ORDERED),
    "gte": OperatorRule("scalar", _ORDERED),
    "lt": OperatorRule("scalar", _ORDERED),
    "lte": OperatorRule("scalar", _ORDERED),
    "in": OperatorRule("array", _ANY),
    "nin": OperatorRule("array", _ANY, negates="in"),
    "contains": OperatorRule("scalar", _CONTAINABLE),
    "exists": OperatorRule("flag", _ANY),
}


def is_filterable(field_type: str) -> bool:
    """Whether any operator applies to ``field_type`` (not to ``geo`` or unknown types)."""
    return any(field_type in rule.applies_to for rule in OPERATOR_RULES.values())
