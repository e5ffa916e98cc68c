"""``Index.search``'s Python options → the §7.7 ``retrieve`` params the server would get.

The options are spelled as the wire spells them and typed by the same
validation, gated by the same capability checks (§7.7 ``strict``, §12) and
their filter parsed by the same §8 parser as a request over RCP, so an
in-process search and a ``retrieve`` agree on every hit and every error.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rcpkit.protocol import messages as m
from rcpkit.protocol.capabilities import Capabilities, FilterCapability
from rcpkit.protocol.filters import OPERATORS, Filter
from rcpkit.protocol.validation import parse_params
from rcpkit.server.filters import validate_filter
from rcpkit.server.gating import check_options

__all__ = ["SearchOptions", "gated", "shorthand"]

_COMBINATORS = ("and", "or", "not")
# Python names of the options whose wire name differs (§7.7 camelCase).
_WIRE = {
    "token_budget": "tokenBudget",
    "index_version": "indexVersion",
    "candidate_k": "candidateK",
    "min_score": "minScore",
    "session_id": "sessionId",
    "top_n": "topN",
    "rrf_k": "rrfK",
    "half_life_days": "halfLifeDays",
}

SearchOptions = dict[str, Any]


def wire_params(query: str, options: SearchOptions) -> dict[str, Any]:
    """The raw ``retrieve`` params for ``query`` and ``search``'s keyword options."""
    raw: dict[str, Any] = {"query": query}
    for name, value in options.items():
        if value is None:
            continue
        raw[_WIRE.get(name, name)] = _WIRE_VALUE.get(name, _same)(value)
    return raw


def gated(
    query: str,
    options: SearchOptions,
    capabilities: Capabilities,
    fields: Mapping[str, str],
    arrays: Sequence[str],
) -> tuple[m.RetrieveParams, Filter | None, list[str]]:
    """Typed and gated params, the parsed filter and the notes gating left (§7.7, §8, §12)."""
    params = parse_params(m.RetrieveParams, wire_params(query, options))
    notes: list[str] = []
    params = check_options("retrieve", params, capabilities, notes)
    tree = None
    if params.filter is not None:
        # §8 against the fields the index declares now (first-sight fields included).
        capability = FilterCapability(fields=dict(fields), operators=sorted(OPERATORS))  # type: ignore[arg-type]
        tree = validate_filter(params.filter, capability, arrays)
    return params, tree, notes


def shorthand(value: Mapping[str, Any]) -> dict[str, Any]:
    """A §8 tree as given, or ``{field: value}`` equality (a list: ``in``) as one.

    ``{"lang": "en", "year": [2023, 2024]}`` is ``lang = "en" and year in (2023, 2024)``
    (Chroma's ``where``); a mapping with ``field``+``op`` or a combinator is a §8 tree.
    """
    if "op" in value or "field" in value or any(key in value for key in _COMBINATORS):
        return dict(value)
    clauses = [
        {"field": name, "op": "in" if isinstance(item, list | tuple) else "eq", "value": item}
        for name, item in value.items()
    ]
    if len(clauses) == 1:
        return clauses[0]
    return {"and": clauses}


def _same(value: Any) -> Any:
    return value


def _spelled(value: Any) -> Any:
    """A mapping's Python keys in their wire spelling."""
    if isinstance(value, Mapping):
        return {_WIRE.get(key, key): item for key, item in value.items()}
    return value


def _fusion(value: Any) -> Any:
    return {"method": value} if isinstance(value, str) else _spelled(value)


def _rerank(value: Any) -> Any:
    # True: the engine's default reranker; a string: that method (§7.7 `rerank` object).
    if value is True:
        return {}
    return {"method": value} if isinstance(value, str) else _spelled(value)


def _mmr(value: Any) -> Any:
    if value is True:
        return {}
    if isinstance(value, int | float) and not isinstance(value, bool):
        return {"lambda": value}
    return value


def _filter(value: Any) -> Any:
    return shorthand(value) if isinstance(value, Mapping) else value


def _version(value: Any) -> Any:
    # The wire's indexVersion is an opaque string (§7.7.1); `stats()["version"]` is an int.
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


_WIRE_VALUE = {
    "fusion": _fusion,
    "rerank": _rerank,
    "mmr": _mmr,
    "filter": _filter,
    "index_version": _version,
    "recency": _spelled,
}
