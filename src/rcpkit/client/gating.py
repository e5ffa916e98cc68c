"""Client-side gating (§14.4): never call an unadvertised method or pass an unadvertised option.

Checks run on the wire-shaped params against the capabilities the server
advertised at ``initialize`` (§13.2: they cannot change), before any I/O.
The method → capability map is the protocol registry; the option checks are
one small function per method, looked up by name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from rcpkit.client.errors import CapabilityMissing, OptionUnsupported
from rcpkit.protocol.errors import ErrorCode, RCPError
from rcpkit.protocol.filters import raw_clauses
from rcpkit.protocol.methods import METHODS

__all__ = ["check_call", "filter_clauses"]

Capabilities = Mapping[str, Any]
Checker = Callable[[dict[str, Any], Capabilities], dict[str, Any]]


def check_call(method: str, params: dict[str, Any], capabilities: Capabilities) -> dict[str, Any]:
    """Raise before I/O if ``method``/its options are not advertised; pre-clamp counts (§4.7)."""
    spec = METHODS.get(method)
    if spec is None:
        if method.startswith("x-"):
            # §6.2: x-<vendor>/<name> needs a matching x-<vendor> capability.
            vendor = method.split("/", 1)[0]
            if vendor not in capabilities:
                raise CapabilityMissing(method, vendor)
            return params
        raise RCPError(ErrorCode.UNKNOWN_METHOD, f"`{method}` is not an RCP method")
    if spec.capability is None:
        return params
    if spec.capability not in capabilities:
        raise CapabilityMissing(method, spec.capability)
    _check_blocks(method, params, capabilities)
    checker = _CHECKERS.get(method)
    return params if checker is None else checker(params, capabilities)


# §4.8: the params fields that may hold Content blocks, and the capability whose
# `modalities` governs them (None: text only). A federation relies on this to pass
# an image block only to the engines that advertise `image`.
_BLOCK_FIELDS: dict[str, tuple[str | None, tuple[str, ...]]] = {
    "retrieve": ("retrieve", ("query",)),
    "rerank": ("rerank", ("query", "passages", "documents")),
    "embed": ("embed", ("inputs", "texts")),
    "embed/multi": ("multiVector", ("inputs", "texts")),
    "embed/sparse": (None, ("inputs", "texts")),
    "index/add": ("index", ("documents",)),
    "query/transform": (None, ("query",)),
    "memory/recall": (None, ("query",)),
    "graph": (None, ("query",)),
}


def _check_blocks(method: str, params: Mapping[str, Any], capabilities: Capabilities) -> None:
    found = _BLOCK_FIELDS.get(method)
    if found is None:
        return
    key, fields = found
    advertised = _cap(capabilities, key).get("modalities") if key is not None else None
    allowed = set(advertised) if isinstance(advertised, list) and advertised else {"text"}
    for name in fields:
        for kind in _block_types(params.get(name), documents=name == "documents"):
            if kind not in allowed and not (kind == "text" and "code" in allowed):
                raise OptionUnsupported(method, "modality", kind)


def _block_types(value: object, *, documents: bool = False) -> Iterator[str]:
    if isinstance(value, list):
        for item in value:
            yield from _block_types(item, documents=documents)
    elif isinstance(value, Mapping):
        if documents:
            yield from _block_types(value.get("content"))
        elif isinstance(value.get("type"), str):
            yield value["type"]


def _cap(capabilities: Capabilities, key: str) -> Mapping[str, Any]:
    value = capabilities.get(key)
    return value if isinstance(value, Mapping) else {}


def _among(method: str, option: str, value: object, allowed: object) -> None:
    if value is None:
        return
    if not isinstance(allowed, list) or value not in allowed:
        raise OptionUnsupported(method, option, value)


def _flag(method: str, option: str, value: object, advertised: object) -> None:
    if value is not None and value is not False and advertised is not True:
        raise OptionUnsupported(method, option, value)


def filter_clauses(node: object) -> Iterator[tuple[str, object]]:
    """Every ``(field, op)`` leaf of a §8 filter tree (the server judges malformed nodes)."""
    for clause in raw_clauses(node):
        field = clause.get("field")
        if isinstance(field, str):
            yield field, clause.get("op")


def _check_filter(method: str, tree: object, capabilities: Capabilities, strict: bool) -> None:
    if tree is None:
        return
    if "filter" not in capabilities:
        if strict:
            raise OptionUnsupported(method, "filter", "filter")
        return  # §7.7: strict:false lets the server drop it and say so
    advertised = _cap(capabilities, "filter")
    fields = advertised.get("fields")
    names = set(fields) if isinstance(fields, Mapping | list) else set()
    operators = advertised.get("operators")
    for field, op in filter_clauses(tree):
        if field not in names:
            # §8: a filter naming an unadvertised field is -32602, not -32005.
            raise RCPError.invalid_params(f"filter.{field}", f"`{field}` is not a filter field")
        if isinstance(operators, list) and op not in operators:
            raise OptionUnsupported(method, "filter.op", op)


def _retrieve(params: dict[str, Any], capabilities: Capabilities) -> dict[str, Any]:
    retrieve = _cap(capabilities, "retrieve")
    strict = params.get("strict") is not False
    # §8: field names are validated whatever `strict` says.
    _check_filter("retrieve", params.get("filter"), capabilities, strict)
    if strict:
        _retrieve_options(params, capabilities, retrieve)
    return _clamp(params, retrieve.get("maxK"))


def _retrieve_options(
    params: dict[str, Any], capabilities: Capabilities, retrieve: Mapping[str, Any]
) -> None:
    name = "retrieve"
    _among(name, "mode", params.get("mode"), retrieve.get("modes") or [])
    fusion = params.get("fusion")
    if isinstance(fusion, Mapping):
        _among(name, "fusion", fusion.get("method"), retrieve.get("fusion") or [])
    rerank = params.get("rerank")
    if isinstance(rerank, Mapping):
        _flag(name, "rerank", "builtin", retrieve.get("rerankBuiltin"))
        _among(name, "rerank", rerank.get("method"), _cap(capabilities, "rerank").get("methods"))
    for option in ("mmr", "recency", "tokenBudget"):
        _flag(name, option, params.get(option), retrieve.get(option))
    _among(name, "unit", params.get("unit"), retrieve.get("units") or ["chunk", "passage"])
    rewrite = params.get("rewrite")
    if isinstance(rewrite, str):
        _among(name, "rewrite", rewrite, _cap(capabilities, "transform").get("methods"))
    if params.get("cursor") is not None and "pagination" not in capabilities:
        raise OptionUnsupported(name, "cursor", "pagination")
    encoding = params.get("encoding")
    if encoding not in (None, "json"):
        _among(name, "encoding", encoding, retrieve.get("encodings"))
    _among(name, "modality", params.get("modality"), retrieve.get("modalities") or ["text"])


def _clamp(params: dict[str, Any], max_k: object) -> dict[str, Any]:
    # §4.7: clients treat advertised bounds as authoritative and pre-clamp.
    if not isinstance(max_k, int) or isinstance(max_k, bool) or max_k < 1:
        return params
    clamped = dict(params)
    for key in ("k", "candidateK"):
        value = clamped.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > max_k:
            clamped[key] = max_k
    return clamped


def _rerank(params: dict[str, Any], capabilities: Capabilities) -> dict[str, Any]:
    _among("rerank", "method", params.get("method"), _cap(capabilities, "rerank").get("methods"))
    return params


def _encoding_of(key: str) -> Checker:
    def check(params: dict[str, Any], capabilities: Capabilities) -> dict[str, Any]:
        encoding = params.get("encoding")
        if encoding not in (None, "json"):  # §7.3.1: json is always supported
            _among(key, "encoding", encoding, _cap(capabilities, key).get("encodings"))
        return params

    return check


def _transform(params: dict[str, Any], capabilities: Capabilities) -> dict[str, Any]:
    methods = _cap(capabilities, "transform").get("methods")
    _among("query/transform", "method", params.get("method"), methods)
    return params


def _graph(params: dict[str, Any], capabilities: Capabilities) -> dict[str, Any]:
    _among("graph", "op", params.get("op"), _cap(capabilities, "graph").get("ops"))
    if params.get("cursor") is not None and "pagination" not in capabilities:
        raise OptionUnsupported("graph", "cursor", "pagination")
    return params


def _index_add(params: dict[str, Any], capabilities: Capabilities) -> dict[str, Any]:
    index = _cap(capabilities, "index")
    if index.get("writable") is not True:
        raise CapabilityMissing("index/add", "index.writable")
    _flag("index/add", "chunk", params.get("chunk"), index.get("chunking"))
    _flag("index/add", "contextual", params.get("contextual"), index.get("contextual"))
    return params


def _memory_build(params: dict[str, Any], capabilities: Capabilities) -> dict[str, Any]:
    scopes = _cap(capabilities, "memory").get("scopes")
    _among("memory/build", "scope", params.get("scope"), scopes)
    return params


_CHECKERS: dict[str, Checker] = {
    "retrieve": _retrieve,
    "rerank": _rerank,
    "embed": _encoding_of("embed"),
    "embed/multi": _encoding_of("multiVector"),
    "query/transform": _transform,
    "graph": _graph,
    "index/add": _index_add,
    "memory/build": _memory_build,
}
