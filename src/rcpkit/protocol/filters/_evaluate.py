"""A pure-Python evaluator of a parsed filter over normalised metadata (§8).

It is the in-memory backend and the oracle the SQL compilers are tested against.
The semantics every backend shares:

* A field holds a scalar or an array; an operator other than ``exists``, ``ne``
  and ``nin`` is true when *any* element satisfies it (a scalar is a one-element
  array). So ``eq`` on an array field is element membership, and a missing field
  or an empty array satisfies none of them.
* ``ne`` is exactly ``not eq`` and ``nin`` exactly ``not in``: they match a
  document lacking the field, and an array only when no element is equal.
* ``exists`` is presence of a non-null value (an empty array is present).
* ``contains`` is a case-sensitive substring test on ``text`` (any element of a
  text array) and element membership on an array-valued field of any other type
  (the parser allows it only there; a scalar is a one-element array).
* An element of the wrong JSON type never satisfies anything: a boolean is not
  the number 1, and a number is not a string.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from typing import assert_never

from rcpkit.protocol.filters._operators import OPERATOR_RULES
from rcpkit.protocol.filters._tree import And, Clause, FieldType, Filter, Not, Operator, Or

__all__ = ["matches"]

_ElementTest = Callable[[Clause, object], bool]


def matches(filter: Filter, normalized_meta: Mapping[str, object]) -> bool:
    """Whether a document whose :func:`normalize_meta` output is given satisfies ``filter``."""
    match filter:
        case Clause():
            return _clause(filter, normalized_meta.get(filter.field))
        case And(children):
            return all(matches(child, normalized_meta) for child in children)
        case Or(children):
            return any(matches(child, normalized_meta) for child in children)
        case Not(child):
            return not matches(child, normalized_meta)
        case _:
            assert_never(filter)


def _clause(clause: Clause, stored: object) -> bool:
    if clause.op == "exists":
        return (stored is not None) is clause.value
    negates = OPERATOR_RULES[clause.op].negates
    test = _ELEMENT_TESTS[negates or clause.op]
    hit = any(test(clause, element) for element in _elements(stored))
    return not hit if negates else hit


def _elements(stored: object) -> Sequence[object]:
    if stored is None:
        return ()
    if isinstance(stored, list | tuple):
        return stored
    return (stored,)


def _is_string(element: object) -> bool:
    return isinstance(element, str)


def _is_number(element: object) -> bool:
    return isinstance(element, int | float) and not isinstance(element, bool)


def _is_boolean(element: object) -> bool:
    return isinstance(element, bool)


# The JSON type an element must have to be compared at all, per field type.
_KIND_TESTS: Mapping[FieldType, Callable[[object], bool]] = {
    "keyword": _is_string,
    "text": _is_string,
    "int": _is_number,
    "float": _is_number,
    "date": _is_number,
    "bool": _is_boolean,
}


def _of_kind(clause: Clause, element: object) -> bool:
    kind_test = _KIND_TESTS.get(clause.field_type)
    return kind_test is not None and kind_test(element)


def _equal(clause: Clause, element: object) -> bool:
    return _of_kind(clause, element) and element == clause.value


def _member(clause: Clause, element: object) -> bool:
    values = clause.value
    return _of_kind(clause, element) and isinstance(values, tuple) and element in values


def _ordered(compare: Callable[[float, float], bool]) -> _ElementTest:
    def test(clause: Clause, element: object) -> bool:
        bound = clause.value
        return (
            _is_number(element)
            and isinstance(element, int | float)
            and isinstance(bound, int | float)
            and compare(element, bound)
        )

    return test


def _substring(clause: Clause, element: object) -> bool:
    needle = clause.value
    return isinstance(element, str) and isinstance(needle, str) and needle in element


def _contains(clause: Clause, element: object) -> bool:
    return _CONTAINS_BY_TYPE.get(clause.field_type, _equal)(clause, element)


# Membership (equality with any element) on every array-valued field but text.
_CONTAINS_BY_TYPE: Mapping[FieldType, _ElementTest] = {"text": _substring}

# Positive operators only: `ne`/`nin` are their complements, `exists` is not per element.
_ELEMENT_TESTS: Mapping[Operator, _ElementTest] = {
    "eq": _equal,
    "gt": _ordered(operator.gt),
    "gte": _ordered(operator.ge),
    "lt": _ordered(operator.lt),
    "lte": _ordered(operator.le),
    "in": _member,
    "contains": _contains,
}
