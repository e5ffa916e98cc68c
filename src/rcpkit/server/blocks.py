"""§4.8: one check for every Content block in any params field of any method.

Which fields take Content is read from the message registry (the params types
of ``METHODS``), never listed by hand, so a new Content-taking field is checked
the day it is added. Two rules, in this order:

- a block whose type is outside the modalities the method's capability
  advertises (``["text"]`` when unadvertised) is ``-32005`` with
  ``data.option = "modality"``;
- a block carrying a ``uri`` is ``-32602`` naming the block (§4.8 forbids
  silently ignoring one), unless it is a non-text block under a URI prefix the
  operator allowed fetching from (``Server.fetches``; none by default, §15.5 SSRF).

A ``uri`` that is not a Content block (``index/add`` ``documents[].uri``, a
hit's ``citation.uri``) is provenance metadata, not content to fetch, and is
not a block: it is not checked here.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import unquote, urlsplit

import msgspec
from msgspec import inspect

from rcpkit.protocol.capabilities import Capabilities
from rcpkit.protocol.content import Content
from rcpkit.protocol.errors import RCPError
from rcpkit.protocol.methods import METHODS

__all__ = ["check_blocks", "content_fields", "fetches", "registry_content_fields"]


def check_blocks(
    method: str,
    params: Any,
    capabilities: Capabilities,
    unavailable: Mapping[str, str] | None = None,
    fetchable: Sequence[str] = (),
) -> None:
    """Refuse (-32005/-32602) any block of ``params`` this server cannot take.

    ``unavailable`` maps a modality the server could offer but does not (a missing
    extra) to the reason, which the -32005 message then gives. ``fetchable`` are
    the URI prefixes the operator allowed a non-text block's ``uri`` to be fetched
    from (the handler fetches it and checks again); any other ``uri`` is -32602.
    """
    fields = content_fields(type(params))
    if not fields:
        return
    allowed = set(_modalities(method, capabilities) or ["text"])
    for name, wire in fields:
        for path, block in _blocks(getattr(params, name), wire):
            kind = block.type
            if kind not in allowed and not (kind == "text" and "code" in allowed):
                why = (unavailable or {}).get(kind)
                raise RCPError.option_unsupported(
                    "modality",
                    f"`{path}` is a {kind} block; modalities {sorted(allowed)}"
                    + (f" ({why})" if why else ""),
                )
            if block.uri is not None and not (kind != "text" and fetches(block.uri, fetchable)):
                where = "outside the URIs this server fetches" if fetchable else ""
                raise RCPError.invalid_params(
                    path,
                    f"`{path}` carries a uri {where or 'and this server fetches no URI'} (§4.8)",
                )


def fetches(uri: str, prefixes: Sequence[str]) -> bool:
    """Whether ``uri`` lies under one of ``prefixes`` (§15.5 SSRF), compared by its parts.

    The scheme, host and port must be a prefix's own, and the percent-decoded path
    must sit under the prefix's decoded path at a segment boundary. A path with a
    dot segment, a backslash, or an encoded separator, dot or percent (``%2f``,
    ``%5c``, ``%2e``, ``%25``; also ``%00``) is refused outright: a source that
    decodes ``%2F`` or resolves ``..`` itself (many do) would otherwise serve a
    path the check never saw (issue 34: ``/ok/..%2fsecret/`` under ``/ok/``).
    """
    if not prefixes:
        return False
    target = _uri_parts(uri)
    return target is not None and any(_under(target, _uri_parts(p)) for p in prefixes)


_REFUSED_ESCAPES = ("%2f", "%5c", "%2e", "%25", "%00")

_Parts = tuple[str, str, str]  # scheme, host[:port], decoded path


def _uri_parts(uri: str) -> _Parts | None:
    """``uri`` as (scheme, authority, decoded path), or None when it cannot be compared."""
    try:
        parts = urlsplit(uri)
        port = parts.port
    except ValueError:
        return None
    raw = parts.path
    if "\\" in uri or parts.username is not None or parts.password is not None:
        return None
    if any(escape in raw.lower() for escape in _REFUSED_ESCAPES):
        return None
    path = unquote(raw)
    if any(segment in (".", "..") for segment in path.split("/")):
        return None
    host = (parts.hostname or "") + (f":{port}" if port is not None else "")
    return parts.scheme.lower(), host, path


def _under(target: _Parts, prefix: _Parts | None) -> bool:
    if prefix is None or target[:2] != prefix[:2]:
        return False
    path, root = target[2], prefix[2]
    if root.endswith("/") or not root:
        return path.startswith(root)
    return path == root or path.startswith(root + "/")


_FIELDS: dict[type, tuple[tuple[str, str], ...]] = {}


def content_fields(params_type: type) -> tuple[tuple[str, str], ...]:
    """The (attribute, wire name) of each field of ``params_type`` that can hold Content."""
    found = _FIELDS.get(params_type)
    if found is None:
        found = _FIELDS[params_type] = _content_fields(params_type)
    return found


def _content_fields(params_type: type) -> tuple[tuple[str, str], ...]:
    if not issubclass(params_type, msgspec.Struct):
        return ()
    info = inspect.type_info(params_type)
    assert isinstance(info, inspect.StructType)
    return tuple(
        (field.name, field.encode_name) for field in info.fields if _holds_content(field.type)
    )


def registry_content_fields() -> dict[str, tuple[str, ...]]:
    """Method → wire names of its Content-taking params fields (for docs and tests)."""
    found = {name: content_fields(spec.params) for name, spec in METHODS.items()}
    return {name: tuple(wire for _, wire in fields) for name, fields in found.items() if fields}


def _holds_content(kind: inspect.Type, seen: frozenset[type] = frozenset()) -> bool:
    if isinstance(kind, inspect.StructType):
        if kind.cls is Content:
            return True
        if kind.cls in seen:
            return False
        return any(_holds_content(f.type, seen | {kind.cls}) for f in kind.fields)
    if isinstance(kind, inspect.UnionType):
        return any(_holds_content(member, seen) for member in kind.types)
    if isinstance(kind, inspect.ListType | inspect.SetType | inspect.FrozenSetType):
        return _holds_content(kind.item_type, seen)
    if isinstance(kind, inspect.VarTupleType):
        return _holds_content(kind.item_type, seen)
    if isinstance(kind, inspect.DictType):
        return _holds_content(kind.value_type, seen)
    return False


def _blocks(value: Any, path: str) -> Iterator[tuple[str, Content]]:
    if isinstance(value, Content):
        yield path, value
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from _blocks(item, f"{path}[{index}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _blocks(item, f"{path}.{key}")
    elif isinstance(value, msgspec.Struct):
        for name, wire in content_fields(type(value)):
            yield from _blocks(getattr(value, name), f"{path}.{wire}")


def _modalities(method: str, capabilities: Capabilities) -> Sequence[str] | None:
    # §4.8: modalities are advertised per capability ("e.g. embed.modalities,
    # retrieve.modalities"); rerank and index carry them too, for their Content fields.
    if method == "embed" and capabilities.embed is not None:
        return capabilities.embed.modalities
    if method == "embed/multi" and capabilities.multi_vector is not None:
        return capabilities.multi_vector.modalities
    if method == "retrieve" and capabilities.retrieve is not None:
        return capabilities.retrieve.modalities
    if method == "rerank" and capabilities.rerank is not None:
        return capabilities.rerank.modalities
    if method == "index/add" and capabilities.index is not None:
        return capabilities.index.modalities
    return None
