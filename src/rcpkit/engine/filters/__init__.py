"""Metadata filtering (§8): validate a client's filter tree, then evaluate or compile it.

The language itself (tree, validator, evaluator) is ``rcpkit.protocol.filters``,
shared with the server runtime; the SQL compilers are the engine's own.

``parse_filter`` turns the untrusted ``retrieve.filter`` object into a typed tree
or raises the precise -32602/-32005 (§8, §12); ``normalize_meta`` is what a store
saves per document at write time; ``matches`` evaluates a tree in Python and
``compile_sqlite`` / ``compile_postgres`` compile it to a parameterised SQLite
or PostgreSQL ``jsonb`` expression with exactly the same meaning (§15.4: client
text never becomes SQL text).

Semantics shared by every backend: a field is a scalar or an array, and an
operator is true when any element satisfies it; ``ne``/``nin`` are exactly
``not eq``/``not in`` and so match documents lacking the field; ``exists`` is
presence; ``contains`` is substring on ``text`` and element membership on a
field the server declares array-valued (``parse_filter(array_fields=…)``; a
scalar stored there is a one-element array), and is refused on any other field;
strings compare case-sensitively by code point,
which is UTF-8 byte order.

Bounds on one filter (§15.5, and what SQLite can compile): 32 nodes deep, 512
nodes in all, 1024 values in one ``in``/``nin``. The retrieve pipeline never
parses a filter: the server runtime does, once (``ctx.filter``, with the
engine's array fields), and ``rcpkit.engine.query.Query`` carries the tree.
"""

from __future__ import annotations

from rcpkit.engine.filters._postgres import compile_postgres
from rcpkit.engine.filters._solr import compile_solr, solr_filter_fields
from rcpkit.engine.filters._sqlite import compile_sqlite
from rcpkit.protocol.filters import (
    OPERATORS,
    And,
    Clause,
    FieldType,
    Filter,
    Not,
    Or,
    matches,
    normalize_meta,
    operators_for,
    parse_filter,
)

__all__ = [
    "OPERATORS",
    "And",
    "Clause",
    "FieldType",
    "Filter",
    "Not",
    "Or",
    "compile_postgres",
    "compile_solr",
    "compile_sqlite",
    "matches",
    "normalize_meta",
    "operators_for",
    "parse_filter",
    "solr_filter_fields",
]
