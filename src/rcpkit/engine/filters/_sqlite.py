"""Compile a parsed filter to a parameterised SQLite ``WHERE`` fragment (§8, §15.4).

The fragment reads a JSON text column holding :func:`normalize_meta` output and
means exactly what :func:`matches` means (see ``_evaluate`` for the semantics).

§15.4: nothing the client sent reaches the SQL text. Field names and values are
bound parameters; the column name comes from code and must be a plain identifier.
Fields are looked up with ``json_each(column)`` and ``key = ?`` rather than
``json_extract(column, '$."name"')``: SQLite's JSON path syntax has no escape for
``"`` inside a quoted label, and it compares labels with the raw (still escaped)
key text, so no path reaches a key containing ``"``, nor a non-ASCII key that
was stored escaped. ``json_each.key`` is the decoded key and matches any name.

Types come from ``json_each.type``, never from the value alone: SQLite reads JSON
``true`` as the integer 1, and a bool field must not match the number 1.

SQLite bounds the nesting of a statement (a 100-entry parser stack in 3.40) and
the height of an expression (1000). So the tree is compiled from its negation
normal form, the most deeply nested child of a junction comes first (the parser
reduces a left operand before reading on, so only later siblings cost stack),
parentheses are written only around an ``OR`` inside an ``AND``, and each clause
is a single flat ``EXISTS``. Every clause is 0 or 1, never NULL, so ``NOT`` and
the reordering of ``AND``/``OR`` operands are exact.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from rcpkit.engine.filters._normal_form import Atom, Junction, Term, negation_normal_form
from rcpkit.protocol.filters import OPERATOR_RULES, Clause, FieldType, Filter, Operator

__all__ = ["compile_sqlite"]

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*", re.ASCII)
# A column with one of these names would be captured by json_each's own
# columns (or the aliases below) inside the generated subqueries.
_RESERVED = frozenset(
    {"key", "value", "type", "atom", "id", "parent", "fullkey", "path", "json", "root"}
    | {"rcp_field", "rcp_element"}
)
# The cost model used only to order junction operands: a later sibling holds
# about this many more parser-stack entries than the first one.
_LATER_SIBLING_COST = 3


@dataclass(frozen=True, slots=True)
class _Fragment:
    sql: str
    params: tuple[object, ...] = ()
    weight: int = 0  # parser-stack entries beyond a single clause (for ordering)


def compile_sqlite(filter: Filter, column: str = "filter_meta") -> tuple[str, list[object]]:
    """``(sql, params)``: a parenthesised boolean expression and its ``?`` parameters.

    ``column`` is a trusted identifier from code (never from the client); it is
    checked against ``^[A-Za-z_][A-Za-z0-9_]*$`` and json_each's column names.
    """
    if _IDENTIFIER.fullmatch(column) is None or column.lower() in _RESERVED:
        raise ValueError(f"not a usable filter column name: {column!r}")
    fragment = _term(negation_normal_form(filter), column)
    return f"({fragment.sql})", list(fragment.params)


def _term(term: Term, column: str) -> _Fragment:
    if isinstance(term, Atom):
        return _atom(term, column)
    return _junction(term, column)


def _junction(junction: Junction, column: str) -> _Fragment:
    operands = [_operand(child, junction.conjunctive, column) for child in junction.children]
    operands.sort(key=lambda operand: operand.weight, reverse=True)
    word = " AND " if junction.conjunctive else " OR "
    weight = operands[0].weight
    if len(operands) > 1:
        weight = max(weight, operands[1].weight + _LATER_SIBLING_COST)
    return _Fragment(
        word.join(operand.sql for operand in operands),
        tuple(param for operand in operands for param in operand.params),
        weight,
    )


def _operand(child: Term, conjunctive: bool, column: str) -> _Fragment:
    fragment = _term(child, column)
    # AND binds tighter than OR, so only a disjunction inside a conjunction needs them.
    if conjunctive and isinstance(child, Junction):
        return _Fragment(f"({fragment.sql})", fragment.params, fragment.weight + 1)
    return fragment


def _atom(atom: Atom, column: str) -> _Fragment:
    clause = atom.clause
    if clause.op == "exists":
        present = _Fragment(
            f"EXISTS (SELECT 1 FROM json_each({column}) AS rcp_field"
            " WHERE rcp_field.key = ? AND rcp_field.type <> 'null')",
            (clause.field,),
        )
        return _negated(present, atom.negated != (clause.value is False))
    negates = OPERATOR_RULES[clause.op].negates
    positive = _any_element(clause, column, _PREDICATES[negates or clause.op])
    return _negated(positive, atom.negated != (negates is not None))


def _negated(fragment: _Fragment, negated: bool) -> _Fragment:
    return _Fragment(f"NOT {fragment.sql}", fragment.params) if negated else fragment


# The element under test: a scalar field is its own single element (json_each over
# '[0]' yields the one row the join needs), an array field each of its elements.
_TYPE = "CASE WHEN rcp_field.type = 'array' THEN rcp_element.type ELSE rcp_field.type END"
_VALUE = "CASE WHEN rcp_field.type = 'array' THEN rcp_element.value ELSE rcp_field.value END"


def _any_element(clause: Clause, column: str, predicate: _Predicate) -> _Fragment:
    test = predicate(clause)
    return _Fragment(
        f"EXISTS (SELECT 1 FROM json_each({column}) AS rcp_field,"
        " json_each(CASE WHEN rcp_field.type = 'array' THEN rcp_field.value ELSE '[0]' END)"
        " AS rcp_element"
        f" WHERE rcp_field.key = ? AND {test.sql})",
        (clause.field, *test.params),
    )


@dataclass(frozen=True, slots=True)
class _Kind:
    """How one field type is compared: which json_each.type values qualify, which
    expression holds the comparable value, and how a filter value is bound."""

    types: str
    compared: str
    bind: Callable[[object], object]


def _as_is(value: object) -> object:
    return value


def _json_boolean(value: object) -> object:
    return "true" if value is True else "false"


_STRING = _Kind("('text')", _VALUE, _as_is)
_NUMBER = _Kind("('integer', 'real')", _VALUE, _as_is)
_KINDS: Mapping[FieldType, _Kind] = {
    "keyword": _STRING,
    "text": _STRING,
    "int": _NUMBER,
    "float": _NUMBER,
    "date": _NUMBER,
    # A boolean is compared by its JSON type name: json_each.value is 1/0 for it.
    "bool": _Kind("('true', 'false')", _TYPE, _json_boolean),
}

_Predicate = Callable[[Clause], _Fragment]


def _comparison(sql_operator: str) -> _Predicate:
    def predicate(clause: Clause) -> _Fragment:
        kind = _KINDS[clause.field_type]
        return _Fragment(
            f"{_TYPE} IN {kind.types} AND {kind.compared} {sql_operator} ?",
            (kind.bind(clause.value),),
        )

    return predicate


def _member(clause: Clause) -> _Fragment:
    kind = _KINDS[clause.field_type]
    values = clause.value if isinstance(clause.value, tuple) else (clause.value,)
    # One JSON array parameter, not one `?` per value: SQLite bounds the number of
    # parameters, the subquery is materialised once, and floats read back exactly.
    listed = json.dumps([kind.bind(value) for value in values], allow_nan=False)
    return _Fragment(
        f"{_TYPE} IN {kind.types} AND {kind.compared} IN (SELECT value FROM json_each(?))",
        (listed,),
    )


def _substring(clause: Clause) -> _Fragment:
    # instr is case-sensitive and works on characters, like Python's `in`.
    return _Fragment(f"{_TYPE} = 'text' AND instr({_VALUE}, ?) > 0", (clause.value,))


_EQUAL = _comparison("=")
# Membership (equality with any element) on every array-valued field but text.
_CONTAINS_BY_TYPE: Mapping[FieldType, _Predicate] = {"text": _substring}


def _contains(clause: Clause) -> _Fragment:
    return _CONTAINS_BY_TYPE.get(clause.field_type, _EQUAL)(clause)


# Positive operators only: `ne`/`nin` are negated `eq`/`in`, `exists` is handled above.
_PREDICATES: Mapping[Operator, _Predicate] = {
    "eq": _EQUAL,
    "gt": _comparison(">"),
    "gte": _comparison(">="),
    "lt": _comparison("<"),
    "lte": _comparison("<="),
    "in": _member,
    "contains": _contains,
}
