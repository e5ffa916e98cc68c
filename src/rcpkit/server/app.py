"""The decorator API over the low-level server, for people wrapping their own engine.

>>> app = App("my-engine", "1.0")
>>> @app.retrieve(max_k=50, filter={"tag": "keyword"})
... def search(query: str, k: int = 5, mode: Literal["sparse"] = "sparse", filter=None):
...     return [(doc.id, doc.score, doc.text) for doc in index.search(query, k)
...             if matches(filter, doc.meta)]
>>> app.run_stdio()          # or app.run_http(8080)

Every RCP method is a decorator named after it (``index/add`` → ``app.index_add``),
generated from the method registry into ``server/_decorators.py``; its keyword
arguments are the method's capability metadata (snake_case). A
``retrieve`` handler may take its fields by name and return plain Python
(``rcpkit.server.plain``); ``filter=`` on it advertises the filter fields, and
the runtime validates every request's filter against them before the handler
runs (§8).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec

from rcpkit.protocol.base import Wire
from rcpkit.protocol.methods import by_python_name
from rcpkit.server._decorators import MethodDecorators
from rcpkit.server.lowlevel import CAPABILITY_TYPES, HandlerMode, Server
from rcpkit.server.plain import plain_handler, plain_results
from rcpkit.server.runner import run_async, run_stdio

if TYPE_CHECKING:
    from rcpkit.transport.http.config import HttpConfig

__all__ = ["App"]

F = TypeVar("F", bound=Callable[..., Any])


class App(MethodDecorators):
    """A Server plus one decorator per RCP method (``app.retrieve``, ``app.index_add``, …)."""

    def __init__(self, name: str, version: str, *, read_only: bool = False) -> None:
        self.server = Server(name, version, read_only=read_only)

    def method(
        self,
        name: str,
        *,
        mode: HandlerMode | None = None,
        capability: Wire | dict[str, Any] | None = None,
        **metadata: Any,
    ) -> Callable[[F], F]:
        """Register the decorated function for the RCP (or ``x-vendor/``) method ``name``."""

        def register(handler: F) -> F:
            fields = metadata.pop("filter", None) if name == "retrieve" else None
            if fields is not None:
                self.advertise("filter", fields=fields)
            runtime: Callable[..., Any] = plain_results(name, handler)
            plain = plain_handler(name, handler)
            if plain is not None:
                runtime = plain.wrapped()
                for key, value in plain.capability.items():
                    metadata.setdefault(key, value)
                if plain.paginates:
                    self.advertise("pagination")
            self.server.handle(
                name, runtime, capability=_capability(name, capability, metadata), mode=mode
            )
            return handler

        return register

    def _register(self, name: str, given: dict[str, Any]) -> Callable[[F], F]:
        """A generated decorator's keywords (its ``locals()``) as ``method``'s arguments."""
        mode, capability = given.pop("mode"), given.pop("capability")
        return self.method(name, mode=mode, capability=capability, **_given(given))

    def advertise(self, key: str, **metadata: Any) -> None:
        """Advertise a capability that is not a method (``streaming``, ``filter``, …)."""
        capability_type = CAPABILITY_TYPES.get(key)
        value = capability_type(**metadata) if capability_type is not None else metadata
        self.server.advertise(key, value)

    async def serve_stdio(self, **options: Any) -> None:
        await self.server.serve_stdio(**options)

    def run_stdio(self, **options: Any) -> None:
        """Serve this process's stdin/stdout until shutdown or EOF."""
        run_stdio(self.server, **options)

    async def serve_http(
        self, port: int = 8080, host: str = "127.0.0.1", *, config: HttpConfig | None = None
    ) -> None:
        from rcpkit.transport.http.config import Listen
        from rcpkit.transport.http.serve import serve_http

        await serve_http(self.server, config, Listen(host=host, port=port))

    def run_http(
        self, port: int = 8080, host: str = "127.0.0.1", *, config: HttpConfig | None = None
    ) -> None:
        """Serve RCP over HTTP (§5.2; the ``http`` extra) until SIGINT/SIGTERM.

        ``host`` defaults to loopback (§15.1); ``port=0`` picks a free port (the
        address is printed on stderr). ``config``: base path, auth, sessions, limits.
        """
        run_async(self.serve_http(port, host, config=config))


def _given(keywords: dict[str, Any]) -> dict[str, Any]:
    """The metadata keywords a caller set (None means "not advertised", §6), lists as lists."""
    return {
        key: list(value) if isinstance(value, tuple) else value
        for key, value in keywords.items()
        if value is not None and key != "self"
    }


def _capability(
    name: str, capability: Wire | dict[str, Any] | None, metadata: dict[str, Any]
) -> Wire | dict[str, Any] | None:
    if capability is not None or not metadata:
        return capability
    spec = by_python_name(name.replace("/", "_"))
    if spec is None or spec.capability is None:
        return metadata  # an extension's capability object
    capability_type = CAPABILITY_TYPES[spec.capability]
    # A struct's constructor checks no types: the round trip through the wire shape
    # refuses a choice the capability does not have (`modes=["fuzzy"]`) at registration.
    built = capability_type(**metadata)
    try:
        return msgspec.convert(msgspec.to_builtins(built), capability_type)
    except msgspec.ValidationError as error:
        raise ValueError(f"`{name}` capability metadata: {error}") from None
