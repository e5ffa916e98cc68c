"""§8 before the handler: a request's ``filter`` checked against what is advertised.

The runtime validates ``retrieve.filter`` against the advertised ``filter``
fields and operators before any handler runs: an unadvertised field or a
mistyped value is -32602 naming the path, an unadvertised operator -32005,
an empty ``and``/``or`` -32602 (§8, §12). The parsed tree is on
``ctx.filter``; :func:`matches` evaluates it over a document's metadata, so
an in-memory engine applies a filter in one line with the same semantics as
the SQLite and PostgreSQL stores.

Fields advertised as names only (``fields: [..]``) have no declared type: each
clause's type is read from its value (a number is ``float``, a boolean
``bool``, a string ``keyword``, or ``date`` under an ordered operator).

An advertisement does not say which fields hold arrays, on which alone §8
allows ``contains`` besides ``text``: a server that knows its fields' shapes
says so (``Server.array_fields``; ``rcpkit``'s engine does, from its
``array_fields``) and the runtime refuses ``contains`` on a scalar one
(-32602); a server that does not say gets ``contains`` on every field. So the
filter is parsed once, here, and the handler takes ``ctx.filter``.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from rcpkit.protocol.capabilities import Capabilities, FilterCapability
from rcpkit.protocol.filters import (
    OPERATORS,
    And,
    Clause,
    FieldType,
    Filter,
    Not,
    Or,
    normalize_meta,
    parse_filter,
    raw_clauses,
)
from rcpkit.protocol.filters import matches as evaluate

__all__ = ["check_filter", "matches", "validate_filter"]

_ORDERED = frozenset({"gt", "gte", "lt", "lte"})


def check_filter(
    method: str,
    params: Any,
    capabilities: Capabilities,
    array_fields: Collection[str] | None = None,
) -> Filter | None:
    """The parsed ``filter`` of a request, or None; raises the §8 error for a bad one."""
    tree = getattr(params, "filter", None) if method == "retrieve" else None
    if tree is None or capabilities.filter is None:
        return None  # no filter, or `strict: false` already dropped an unadvertised one
    return validate_filter(tree, capabilities.filter, array_fields)


def validate_filter(
    tree: object, capability: FilterCapability, array_fields: Collection[str] | None = None
) -> Filter:
    """``tree`` checked against ``capability`` (§8), as a typed, normalised filter.

    ``array_fields`` None: the server did not say which fields hold arrays, and
    ``contains`` is allowed on every field.
    """
    operators: Collection[str] = capability.operators or OPERATORS
    fields = capability.fields
    if not isinstance(fields, Mapping):
        fields = _inferred(tree, frozenset(fields))
    arrays = fields if array_fields is None else array_fields
    return parse_filter(tree, fields, operators, array_fields=arrays)


def matches(filter: Filter | Mapping[str, Any] | None, meta: Mapping[str, Any] | None) -> bool:
    """Whether a document with metadata ``meta`` satisfies ``filter`` (§8).

    ``filter`` is ``ctx.filter`` (typed as advertised) or a raw §8 object (typed
    from its values). ``None`` matches everything. ``meta`` is the document's own
    metadata: dates as RFC 3339 or epoch ms, lists as array-valued fields.
    """
    if filter is None:
        return True
    tree = filter if isinstance(filter, Clause | And | Or | Not) else _parse_raw(filter)
    return evaluate(tree, normalize_meta(meta or {}, _field_types(tree)))


def _parse_raw(raw: Mapping[str, Any]) -> Filter:
    fields = _inferred(raw, None)
    return parse_filter(raw, fields, OPERATORS, array_fields=fields)


def _inferred(tree: object, known: frozenset[str] | None) -> dict[str, FieldType]:
    """A type per clause field, read from its value (names-only fields)."""
    types: dict[str, FieldType] = {}
    for node in raw_clauses(tree):
        field = node.get("field")
        if isinstance(field, str) and (known is None or field in known):
            types.setdefault(field, _type_of(node.get("op"), node.get("value")))
    return types


def _type_of(op: object, value: object) -> FieldType:
    sample = value[0] if isinstance(value, list) and value else value
    if isinstance(sample, bool) and op != "exists":
        return "bool"
    if isinstance(sample, int | float) and not isinstance(sample, bool):
        return "float"
    return "date" if op in _ORDERED else "keyword"


def _field_types(tree: Filter) -> dict[str, FieldType]:
    match tree:
        case Clause():
            return {tree.field: tree.field_type}
        case And(children) | Or(children):
            types: dict[str, FieldType] = {}
            for child in children:
                types.update(_field_types(child))
            return types
        case Not(child):
            return _field_types(child)
    return {}
