"""The gateway's own §8 check of a filter, against the union it advertises.

An engine lacking a field is skipped (noted); a field no engine has, an
empty ``and``/``or`` or a mistyped value is the caller's error, so the
gateway answers it itself (-32602, or -32005 for an unadvertised operator)
rather than reporting that every engine refused.
"""

from __future__ import annotations

from typing import Any

from rcpkit.client.gating import filter_clauses
from rcpkit.engine.filters import OPERATORS, parse_filter
from rcpkit.protocol.capabilities import FilterCapability
from rcpkit.protocol.errors import RCPError

__all__ = ["validate_filter"]


def validate_filter(tree: Any, capability: FilterCapability) -> None:
    operators = capability.operators or sorted(OPERATORS)
    if isinstance(capability.fields, dict):
        # An advertisement does not say which fields hold arrays (§8 `contains`):
        # the gateway lets each engine, which knows, refuse a `contains` itself.
        parse_filter(tree, capability.fields, operators, array_fields=capability.fields)
        return
    # Fields advertised without types: names and structure only; engines check values.
    known = set(capability.fields)
    _check_structure(tree, "filter")
    for field, op in filter_clauses(tree):
        if field not in known:
            raise RCPError.invalid_params(f"filter.{field}", f"`{field}` is not a filter field")
        if op not in operators:
            raise RCPError.option_unsupported("filter.op", f"operator {op!r} is not advertised")


def _check_structure(node: Any, path: str) -> None:
    if not isinstance(node, dict):
        raise RCPError.invalid_params(path, f"filter node `{path}` must be an object")
    for combinator in ("and", "or"):
        if combinator in node:
            children = node[combinator]
            if not isinstance(children, list) or not children:
                raise RCPError.invalid_params(
                    f"{path}.{combinator}", f"`{combinator}` needs a non-empty array"
                )
            for index, child in enumerate(children):
                _check_structure(child, f"{path}.{combinator}[{index}]")
    if "not" in node:
        _check_structure(node["not"], f"{path}.not")
