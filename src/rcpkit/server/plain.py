"""``retrieve`` handlers in plain Python: fields by name in, tuples or dicts out.

>>> @app.retrieve()
... def search(query: str, k: int = 3, mode: Literal["sparse"] = "sparse"):
...     return [("doc-1", 0.9, "the text"), ...]

A handler whose first parameter is ``query`` and whose others are named after
``RetrieveParams`` fields (plus, optionally, the ``RequestContext`` as ``ctx``)
gets those fields as keyword arguments: ``query`` as its text, ``filter`` as
the tree the runtime validated (for :func:`rcpkit.matches`), and the handler's
own default for a field the client did not send. It may return
``(id, score)`` / ``(id, score, text)`` tuples, dicts in the Hit's wire shape,
``Hit``s, or a whole result; the runtime builds the ``RetrieveResult``, keeps
at most ``k`` hits (§7.7) and echoes its notes in ``usage.notes``.

What the signature says is advertised: ``mode: Literal[...]`` gives
``retrieve.modes`` (its default ``defaultMode``), a ``token_budget``, ``mmr``
or ``recency`` parameter the matching flag; explicit decorator metadata wins.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args, get_origin

import msgspec

from rcpkit.protocol import messages as m
from rcpkit.protocol.content import Hit, text_of
from rcpkit.server.context import RequestContext

__all__ = ["PlainHandler", "plain_handler", "plain_results", "to_retrieve_result"]

_FIELDS = {field.name: field.encode_name for field in msgspec.structs.fields(m.RetrieveParams)}
_FLAGS = ("token_budget", "mmr", "recency")  # a parameter for it means the engine honours it
_CONTEXT_NAMES = ("ctx", "context")


@dataclass(frozen=True, slots=True)
class PlainHandler:
    """A plain retrieve handler and what its signature declares."""

    handler: Callable[..., Any]
    fields: tuple[str, ...]
    context: str | None
    defaults: Mapping[str, Any]
    capability: Mapping[str, Any]  # RetrieveCapability keywords derived from the signature

    @property
    def paginates(self) -> bool:
        return "cursor" in self.fields

    def wrapped(self) -> Callable[..., Any]:
        """The runtime-facing ``(params, ctx)`` handler (async if the function is)."""
        if inspect.iscoroutinefunction(self.handler):

            async def call_async(params: m.RetrieveParams, ctx: RequestContext) -> Any:
                result = await self.handler(**self.arguments(params, ctx))
                return to_retrieve_result(result, self.k_of(params, ctx), ctx.notes)

            return call_async

        def call(params: m.RetrieveParams, ctx: RequestContext) -> Any:
            result = self.handler(**self.arguments(params, ctx))
            return to_retrieve_result(result, self.k_of(params, ctx), ctx.notes)

        return call

    def arguments(self, params: m.RetrieveParams, ctx: RequestContext) -> dict[str, Any]:
        values: dict[str, Any] = {}
        for name in self.fields:
            if _FIELDS[name] not in ctx.sent and name in self.defaults:
                values[name] = self.defaults[name]  # the client chose nothing: ours applies
            elif name == "query":
                values[name] = text_of(params.query)
            elif name == "filter":
                values[name] = ctx.filter if ctx.filter is not None else params.filter
            else:
                values[name] = getattr(params, name)
        if self.context is not None:
            values[self.context] = ctx
        return values

    def k_of(self, params: m.RetrieveParams, ctx: RequestContext) -> int:
        default = self.defaults.get("k")
        if "k" not in ctx.sent and isinstance(default, int):
            return default
        return params.k


def plain_handler(method: str, handler: Callable[..., Any]) -> PlainHandler | None:
    """``handler`` as a plain retrieve handler, or None for a ``(params, ctx)`` one."""
    if method != "retrieve":
        return None
    parameters = list(inspect.signature(handler).parameters.values())
    hints = _hints(handler)
    if not parameters or _is_typed_tier(parameters[0], hints):
        return None
    fields: list[str] = []
    context: str | None = None
    for parameter in parameters:
        if parameter.name in _FIELDS:
            fields.append(parameter.name)
        elif parameter.name in _CONTEXT_NAMES or hints.get(parameter.name) is RequestContext:
            context = parameter.name
        else:
            raise TypeError(f"`{parameter.name}` is neither a retrieve field nor the context")
    defaults = {
        p.name: p.default for p in parameters if p.name in _FIELDS and p.default is not p.empty
    }
    return PlainHandler(
        handler, tuple(fields), context, defaults, _derived(fields, defaults, hints)
    )


def _is_typed_tier(first: inspect.Parameter, hints: Mapping[str, Any]) -> bool:
    # Plain handlers start with `query`; anything else is the typed `(params, ctx)` tier.
    return first.name != "query" or hints.get(first.name) is m.RetrieveParams


def _hints(handler: Callable[..., Any]) -> dict[str, Any]:
    try:
        return typing.get_type_hints(handler)
    except (NameError, TypeError):
        return {}  # an annotation that does not resolve says nothing we can use


def _derived(
    fields: list[str], defaults: Mapping[str, Any], hints: Mapping[str, Any]
) -> dict[str, Any]:
    capability: dict[str, Any] = {flag: True for flag in _FLAGS if flag in fields}
    modes = _literal_values(hints.get("mode"))
    if modes:
        capability["modes"] = modes
        if defaults.get("mode") in modes:
            capability["default_mode"] = defaults["mode"]
    return capability


def _literal_values(annotation: object) -> list[Any]:
    if get_origin(annotation) is Literal:
        return list(get_args(annotation))
    values: list[Any] = []
    for member in get_args(annotation):  # Optional[Literal[...]], Literal[...] | None
        values.extend(_literal_values(member))
    return values


def plain_results(method: str, handler: Callable[..., Any]) -> Callable[..., Any]:
    """A typed-tier ``retrieve``/``graph`` handler that may return a plain list of hits."""
    if method not in ("retrieve", "graph"):
        return handler
    positional = [
        p
        for p in inspect.signature(handler).parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    wants_context = len(positional) >= 2

    def convert(result: Any, params: Any, ctx: RequestContext) -> Any:
        if not _is_plain_list(result):
            return result
        if method == "retrieve":
            return to_retrieve_result(result, params.k, ctx.notes)
        hits = [_hit(item) for item in result][: params.k]
        return m.GraphResult(hits=hits)

    if inspect.iscoroutinefunction(handler):

        async def call_async(params: Any, ctx: RequestContext) -> Any:
            arguments = (params, ctx) if wants_context else (params,)
            return convert(await handler(*arguments), params, ctx)

        return call_async

    def call(params: Any, ctx: RequestContext) -> Any:
        arguments = (params, ctx) if wants_context else (params,)
        return convert(handler(*arguments), params, ctx)

    return call


def _is_plain_list(value: Any) -> bool:
    return isinstance(value, Iterable) and not isinstance(
        value, str | bytes | Mapping | msgspec.Struct
    )


def to_retrieve_result(value: Any, k: int, notes: list[str]) -> Any:
    """A handler's return value as a ``RetrieveResult`` (results pass through)."""
    if isinstance(value, m.RetrieveResult) or (isinstance(value, Mapping) and "hits" in value):
        return value
    if not isinstance(value, Iterable) or isinstance(value, str | bytes | Mapping):
        raise TypeError(f"a retrieve handler returned {type(value).__name__}, not hits")
    hits = [_hit(item) for item in value][:k]  # §7.7: never more than k
    usage = m.Usage(notes=list(notes)) if notes else None
    return m.RetrieveResult(hits=hits, usage=usage)


def _hit(item: Any) -> Hit:
    if isinstance(item, Hit):
        return item
    if isinstance(item, tuple | list) and len(item) in (2, 3):
        text = item[2] if len(item) == 3 else None
        return Hit(id=item[0], score=float(item[1]), text=text)
    if isinstance(item, Mapping):
        return msgspec.convert(dict(item), Hit, strict=False)
    raise TypeError(f"a hit is (id, score[, text]), a dict or a Hit, not {type(item).__name__}")
