"""Compile a parsed filter to a Solr filter query (``fq``) over rcpkit's filter fields.

Same meaning as :func:`matches` (§8; see ``_evaluate``). A chunk's normalised
metadata is indexed by :func:`solr_filter_fields`: each scalar (or each element
of an array) goes to a field of its JSON type, so a comparison never crosses
types (``true`` is not ``1``, ``"1"`` is not ``1``), as in the other backends:

* ``fs_<name>`` strings (exact, case-sensitive; ``contains`` on ``text`` fields
  is a wildcard on them), ``fd_<name>`` numbers (doubles: integers are exact to
  2^53, dates are epoch milliseconds), ``fb_<name>`` booleans;
* ``fx`` the names of the fields present and not null (``exists``).

``<name>`` is the field's name in hex, so any name works. §15.4: client values
reach the query only quoted and escaped, never as syntax. ``ne``/``nin`` and
``not`` are ``*:* -X``, so they match chunks lacking the field.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from rcpkit.engine.filters._normal_form import Atom, Term, negation_normal_form
from rcpkit.protocol.filters import OPERATOR_RULES, Clause, Filter, Operator

__all__ = ["compile_solr", "solr_filter_fields"]

PRESENT = "fx"


def _name(field: str, kind: str) -> str:
    return f"f{kind}_{field.encode().hex()}"


def solr_filter_fields(meta: Mapping[str, Any]) -> dict[str, list[Any]]:
    """The Solr fields of one chunk's normalised metadata (what :func:`compile_solr` reads)."""
    fields: dict[str, list[Any]] = {PRESENT: []}
    for field, value in meta.items():
        if value is None:
            continue
        fields[PRESENT].append(field)
        for element in value if isinstance(value, list) else [value]:
            kind = _kind(element)
            if kind is not None:
                fields.setdefault(_name(field, kind), []).append(element)
    return fields


def _kind(value: object) -> str | None:
    if isinstance(value, bool):
        return "b"
    if isinstance(value, int | float):
        return "d" if math.isfinite(value) else None
    if isinstance(value, str):
        return "s"
    return None  # nested arrays and objects: no scalar to compare with


def compile_solr(filter: Filter) -> str:
    """One Lucene-syntax query, parenthesised, with exactly :func:`matches`' meaning."""
    return _term(negation_normal_form(filter))


def _term(term: Term) -> str:
    if isinstance(term, Atom):
        return _atom(term)
    word = " AND " if term.conjunctive else " OR "
    return "(" + word.join(_term(child) for child in term.children) + ")"


def _atom(atom: Atom) -> str:
    clause = atom.clause
    if clause.op == "exists":
        return _negated(
            f"{PRESENT}:{_quoted(clause.field)}", atom.negated != (clause.value is False)
        )
    negates = OPERATOR_RULES[clause.op].negates
    positive = _PREDICATES[negates or clause.op](clause)
    return _negated(positive, atom.negated != (negates is not None))


def _negated(query: str, negated: bool) -> str:
    return f"(*:* -{query})" if negated else f"({query})"


def _quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _number(value: float) -> str:
    return repr(float(value))


def _equal(clause: Clause, value: object | None = None) -> str:
    value = clause.value if value is None else value
    kind = _kind(value)
    if kind is None:
        return "(-*:*)"  # nothing equals a value no field holds
    if kind == "d":
        number = _number(value)  # type: ignore[arg-type]
        return f"{_name(clause.field, 'd')}:[{number} TO {number}]"
    text = ("true" if value else "false") if kind == "b" else str(value)
    return f"{_name(clause.field, kind)}:{_quoted(text)}"


def _member(clause: Clause) -> str:
    values = clause.value if isinstance(clause.value, tuple) else (clause.value,)
    if not values:
        return "(-*:*)"
    return "(" + " OR ".join(_equal(clause, value) for value in values) + ")"


def _ordered(low: bool, inclusive: bool) -> Callable[[Clause], str]:
    def predicate(clause: Clause) -> str:
        if _kind(clause.value) != "d":
            return "(-*:*)"  # order is over numbers only (§8)
        bound = _number(clause.value)  # type: ignore[arg-type]
        field = _name(clause.field, "d")
        if low:  # gt / gte: (bound, *]
            return f"{field}:{'[' if inclusive else '{'}{bound} TO *]"
        return f"{field}:[* TO {bound}{']' if inclusive else '}'}"

    return predicate


def _wildcard(text: str) -> str:
    # Every character a wildcard query reads as syntax is escaped, so the client's
    # text is matched literally, case-sensitively (a StrField keeps it as written).
    special = set('\\+-!():^[]"{}~*?|&/ ')
    return "".join("\\" + char if char in special else char for char in text)


def _contains(clause: Clause) -> str:
    if clause.field_type == "text":
        if not isinstance(clause.value, str):
            return "(-*:*)"
        if clause.value == "":
            return f"{_name(clause.field, 's')}:*"
        return f"{_name(clause.field, 's')}:*{_wildcard(clause.value)}*"
    return _equal(clause)


# Positive operators only: `ne`/`nin` are negated `eq`/`in`, `exists` is handled above.
_PREDICATES: Mapping[Operator, Callable[[Clause], str]] = {
    "eq": _equal,
    "gt": _ordered(True, False),
    "gte": _ordered(True, True),
    "lt": _ordered(False, False),
    "lte": _ordered(False, True),
    "in": _member,
    "contains": _contains,
}
