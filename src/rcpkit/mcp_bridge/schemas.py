"""JSON Schemas for the bridge's tools, derived from the engine's advertised capabilities.

The ``filter`` schema lists only the advertised fields (§8), each with the
operators that apply to its type and that the engine advertises (``contains``
on keyword fields too: it is membership on array-valued ones such as
``folders`` and ``tag``), and the JSON type its ``value`` must have, so a
host's model sees what it may ask for instead of guessing. The engine still
validates (-32602/-32005): the schema is guidance, never the check.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rcpkit.protocol.filters import OPERATOR_RULES

__all__ = ["filter_schema", "graph_schema", "index_add_schema", "retrieve_schema"]

_ALL_OPERATORS = ("eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "contains", "exists")
_SCALARS: Mapping[str, dict[str, Any]] = {
    "keyword": {"type": "string"},
    "text": {"type": "string"},
    "int": {"type": "integer"},
    "float": {"type": "number"},
    "bool": {"type": "boolean"},
    # §4.6: an RFC 3339 string or epoch milliseconds.
    "date": {"type": ["string", "integer"], "description": "RFC 3339 or epoch ms"},
}
_ANY_SCALAR: dict[str, Any] = {"type": ["string", "number", "boolean"]}


def filter_schema(capability: Mapping[str, Any]) -> dict[str, Any] | None:
    """The §8 filter tree restricted to ``capability``'s fields and operators."""
    raw_fields = capability.get("fields")
    fields: dict[str, str | None]
    if isinstance(raw_fields, Mapping):
        fields = {str(name): str(kind) for name, kind in raw_fields.items()}
    elif isinstance(raw_fields, list):
        fields = {str(name): None for name in raw_fields}  # names only: types unknown
    else:
        return None
    advertised = capability.get("operators") or list(_ALL_OPERATORS)
    operators = [op for op in _ALL_OPERATORS if op in advertised]
    clauses = [
        clause
        for name, kind in fields.items()
        if (clause := _clause(name, kind, operators)) is not None
    ]
    if not clauses:
        return None
    node = {"$ref": "#/$defs/node"}
    return {
        "description": "metadata filter (§8): a clause, or and/or/not of filters",
        "$defs": {
            "node": {
                "anyOf": [
                    *clauses,
                    _junction("and", node),
                    _junction("or", node),
                    {
                        "type": "object",
                        "properties": {"not": node},
                        "required": ["not"],
                        "additionalProperties": False,
                    },
                ]
            }
        },
        "$ref": "#/$defs/node",
    }


def _clause(name: str, kind: str | None, operators: Sequence[str]) -> dict[str, Any] | None:
    usable = [op for op in operators if _applies(op, kind)]
    if not usable:
        return None  # e.g. a geo field: nothing applies
    scalar = _SCALARS.get(kind, _ANY_SCALAR) if kind is not None else _ANY_SCALAR
    value = {
        "anyOf": [scalar, {"type": "array", "items": scalar, "minItems": 1}, {"type": "boolean"}]
    }
    return {
        "type": "object",
        "properties": {
            "field": {"const": name},
            "op": {"enum": usable},
            "value": value,
        },
        "required": ["field", "op", "value"],
        "additionalProperties": False,
        "description": f"{name} ({kind or 'untyped'})",
    }


def _applies(op: str, kind: str | None) -> bool:
    rule = OPERATOR_RULES[op]  # type: ignore[index]
    if kind is None or kind in rule.applies_to:
        return True
    # §8 `contains` is membership on an array-valued field; an advertisement does not
    # say which fields hold arrays (rcpkit's `folders` and `tag` do), so a keyword
    # field offers it and the engine refuses it on a scalar one (-32602).
    return rule.on_arrays and kind == "keyword"


def _junction(key: str, node: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {key: {"type": "array", "items": node, "minItems": 1}},
        "required": [key],
        "additionalProperties": False,
    }


def retrieve_schema(capabilities: Mapping[str, Any]) -> dict[str, Any]:
    """``retrieve``'s arguments: what the engine advertised, nothing it did not."""
    retrieve = _object(capabilities.get("retrieve"))
    k: dict[str, Any] = {"type": "integer", "minimum": 1, "default": 10}
    if isinstance(retrieve.get("maxK"), int):
        k["maximum"] = retrieve["maxK"]
    properties: dict[str, Any] = {
        "query": {"type": "string", "description": "what to look for, in natural language"},
        "k": k,
    }
    modes = retrieve.get("modes")
    if isinstance(modes, list) and modes:
        mode: dict[str, Any] = {"enum": list(modes)}
        if retrieve.get("defaultMode") in modes:
            mode["default"] = retrieve["defaultMode"]
        properties["mode"] = mode
    filters = filter_schema(_object(capabilities.get("filter")))
    if filters is not None:
        properties["filter"] = filters
    if retrieve.get("tokenBudget"):
        properties["tokenBudget"] = {
            "type": "integer",
            "minimum": 1,
            "description": "pack hits until their text reaches this many tokens",
        }
    if "pagination" in capabilities:
        properties["cursor"] = {
            "type": "string",
            "description": "nextCursor of an earlier call with the same arguments: the next page",
        }
    return {"type": "object", "properties": properties, "required": ["query"]}


def graph_schema(capabilities: Mapping[str, Any]) -> dict[str, Any]:
    ops = _object(capabilities.get("graph")).get("ops") or []
    return {
        "type": "object",
        "properties": {
            "op": {"enum": list(ops)},
            "query": {"type": "string"},
            "k": {"type": "integer", "minimum": 1},
            "seedIds": {"type": "array", "items": {"type": "string"}},
            "hops": {"type": "integer", "minimum": 1},
        },
        "required": ["op"],
    }


def index_add_schema() -> dict[str, Any]:
    document = {
        "type": "object",
        "properties": {
            "id": {"type": "string", "description": "stable id: re-adding it replaces"},
            "text": {"type": "string"},
            "meta": {"type": "object"},
        },
        "required": ["id", "text"],
    }
    return {
        "type": "object",
        "properties": {"documents": {"type": "array", "items": document, "minItems": 1}},
        "required": ["documents"],
    }


def index_delete_schema() -> dict[str, Any]:
    ids = {"type": "array", "items": {"type": "string"}, "minItems": 1}
    return {"type": "object", "properties": {"ids": ids}, "required": ["ids"]}


def _object(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}
