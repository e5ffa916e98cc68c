"""The §8 filter language: validate a client's filter tree, then evaluate it in Python.

``parse_filter`` turns the untrusted ``retrieve.filter`` object into a typed tree
or raises the precise -32602/-32005 (§8, §12); ``normalize_meta`` is the
filterable view of a document's metadata; ``matches`` evaluates a tree over it.
The backends that compile a tree to SQL live in ``rcpkit.engine.filters``; this
package is what the server runtime, the gateway and in-memory engines share
(the reference SDKs' canonical ``rcp.filter`` module, §8 implementation note).

Semantics shared by every backend: a field is a scalar or an array, and an
operator is true when any element satisfies it; ``ne``/``nin`` are exactly
``not eq``/``not in`` and so match documents lacking the field; ``exists`` is
presence; ``contains`` is substring on ``text`` and element membership on a
field the server declares array-valued (``parse_filter(array_fields=…)``; a
scalar stored there is a one-element array), and is refused on any other field;
strings compare case-sensitively by code point,
which is UTF-8 byte order.
"""

from __future__ import annotations

from rcpkit.protocol.filters._evaluate import matches
from rcpkit.protocol.filters._normalize import normalize_meta
from rcpkit.protocol.filters._operators import OPERATOR_RULES, OperatorRule, operators_for
from rcpkit.protocol.filters._parse import parse_filter
from rcpkit.protocol.filters._raw import raw_clauses
from rcpkit.protocol.filters._tree import (
    OPERATORS,
    And,
    Clause,
    FieldType,
    Filter,
    Not,
    Operator,
    Or,
)

__all__ = [
    "OPERATORS",
    "OPERATOR_RULES",
    "And",
    "Clause",
    "FieldType",
    "Filter",
    "Not",
    "Operator",
    "OperatorRule",
    "Or",
    "matches",
    "normalize_meta",
    "operators_for",
    "parse_filter",
    "raw_clauses",
]
