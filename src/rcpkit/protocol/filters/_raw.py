"""The leaves of a raw (not yet parsed) §8 filter tree, for the checks that run before parsing."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any


def raw_clauses(node: object) -> Iterator[Mapping[str, Any]]:
    """Every clause node (one with a ``field`` key) under ``and``/``or``/``not``.

    Malformed nodes are skipped, not refused: ``parse_filter`` judges them.
    """
    if not isinstance(node, Mapping):
        return
    for combinator in ("and", "or"):
        children = node.get(combinator)
        if isinstance(children, list):
            for child in children:
                yield from raw_clauses(child)
    if "not" in node:
        yield from raw_clauses(node["not"])
    if "field" in node:
        yield node
