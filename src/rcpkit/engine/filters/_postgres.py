"""Compile a parsed filter to a parameterised PostgreSQL ``WHERE`` fragment over ``jsonb``.

Same meaning as :func:`matches` (§8; see ``_evaluate`` for the semantics), for
psycopg's ``%s`` placeholders.

§15.4: nothing the client sent reaches the SQL text. A field is looked up with
``column -> %s`` (the key is a bound parameter, so no path quoting and any name
works) and values are bound as ``jsonb``. Comparisons are ``jsonb`` comparisons,
which never cross JSON types: ``true`` is not ``1`` and ``"1"`` is not ``1``,
numbers compare as exact ``numeric`` (``2020 = 2020.0``, like Python), and
strings compare by bytes under the C collation the store's database uses.

``eq``, a short ``in`` and ``contains`` on an array-valued field are written as ``jsonb``
containment so the GIN index on the column serves them; the other operators test the elements of the
field (a scalar is its own one element) under ``EXISTS``. Every clause is true or
false, never NULL (the column is ``NOT NULL``), so ``NOT`` is exact.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from rcpkit.engine.filters._normal_form import Atom, Term, negation_normal_form
from rcpkit.protocol.filters import OPERATOR_RULES, Clause, Filter, Operator

__all__ = ["compile_postgres"]

_COLUMN = re.compile(r"(?:[A-Za-z_][A-Za-z0-9_]*\.)?[A-Za-z_][A-Za-z0-9_]*", re.ASCII)


@dataclass(frozen=True, slots=True)
class _Fragment:
    sql: str
    params: tuple[object, ...] = ()


def compile_postgres(filter: Filter, column: str = "filter_meta") -> tuple[str, list[object]]:
    """``(sql, params)``: a parenthesised boolean expression and its ``%s`` parameters.

    ``column`` (optionally ``table.column``) is a trusted identifier from code,
    naming a ``jsonb NOT NULL`` column holding :func:`normalize_meta` output.
    """
    if _COLUMN.fullmatch(column) is None:
        raise ValueError(f"not a usable filter column name: {column!r}")
    fragment = _term(negation_normal_form(filter), column)
    return f"({fragment.sql})", list(fragment.params)


def _term(term: Term, column: str) -> _Fragment:
    if isinstance(term, Atom):
        return _atom(term, column)
    word = " AND " if term.conjunctive else " OR "
    parts = [_term(child, column) for child in term.children]
    return _Fragment(
        "(" + word.join(part.sql for part in parts) + ")",
        tuple(param for part in parts for param in part.params),
    )


def _atom(atom: Atom, column: str) -> _Fragment:
    clause = atom.clause
    if clause.op == "exists":
        # Present and not JSON null; an empty array or an object is present.
        present = _Fragment(
            f"({column} ? %s AND {column} -> %s <> 'null'::jsonb)", (clause.field, clause.field)
        )
        return _negated(present, atom.negated != (clause.value is False))
    negates = OPERATOR_RULES[clause.op].negates
    positive = _PREDICATES[negates or clause.op](clause, column)
    return _negated(positive, atom.negated != (negates is not None))


def _negated(fragment: _Fragment, negated: bool) -> _Fragment:
    return _Fragment(f"NOT {fragment.sql}", fragment.params) if negated else fragment


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def _contained(clause: Clause, column: str) -> _Fragment:
    # {"f": v} matches a scalar equal to v, {"f": [v]} an array holding an element
    # equal to v (a nested array [v] is not an element equal to v, as in Python).
    scalar = _json({clause.field: clause.value})
    element = _json({clause.field: [clause.value]})
    return _Fragment(f"({column} @> %s::jsonb OR {column} @> %s::jsonb)", (scalar, element))


def _elements(column: str, test: str) -> str:
    field = f"{column} -> %s"
    return (
        "EXISTS (SELECT 1 FROM jsonb_array_elements(CASE jsonb_typeof("
        f"{field}) WHEN 'array' THEN {field} ELSE jsonb_build_array({field}) END)"
        f" AS rcp_element(value) WHERE {test})"
    )


_CONTAINED_MAX = 16  # an `in` with up to this many values is ORed containments (GIN)


def _member(clause: Clause, column: str) -> _Fragment:
    values = clause.value if isinstance(clause.value, tuple) else (clause.value,)
    if len(values) <= _CONTAINED_MAX:
        parts = [
            _contained(Clause(clause.field, "eq", v, clause.field_type), column) for v in values
        ]
        return _Fragment(
            "(" + " OR ".join(part.sql for part in parts) + ")",
            tuple(param for part in parts for param in part.params),
        )
    listed = [_json(value) for value in values]
    return _Fragment(
        _elements(column, "rcp_element.value = ANY(%s::jsonb[])"),
        (clause.field, clause.field, clause.field, listed),
    )


def _ordered(sql_operator: str) -> Callable[[Clause, str], _Fragment]:
    def predicate(clause: Clause, column: str) -> _Fragment:
        # jsonb orders numbers numerically and puts other types apart; the type test
        # keeps a string or a boolean from ever comparing with a number.
        test = (
            "jsonb_typeof(rcp_element.value) = 'number'"
            f" AND rcp_element.value {sql_operator} %s::jsonb"
        )
        return _Fragment(
            _elements(column, test), (clause.field, clause.field, clause.field, _json(clause.value))
        )

    return predicate


def _substring(clause: Clause, column: str) -> _Fragment:
    # strpos is case-sensitive and works on characters, like Python's `in`; the
    # CASE keeps #>> from reading a non-string.
    test = (
        "CASE WHEN jsonb_typeof(rcp_element.value) = 'string'"
        " THEN strpos(rcp_element.value #>> '{}', %s) > 0 ELSE false END"
    )
    return _Fragment(
        _elements(column, test), (clause.field, clause.field, clause.field, clause.value)
    )


def _contains(clause: Clause, column: str) -> _Fragment:
    if clause.field_type == "text":
        return _substring(clause, column)
    return _contained(clause, column)


_Predicate = Callable[[Clause, str], _Fragment]
# Positive operators only: `ne`/`nin` are negated `eq`/`in`, `exists` is handled above.
_PREDICATES: Mapping[Operator, _Predicate] = {
    "eq": _contained,
    "gt": _ordered(">"),
    "gte": _ordered(">="),
    "lt": _ordered("<"),
    "lte": _ordered("<="),
    "in": _member,
    "contains": _contains,
}
