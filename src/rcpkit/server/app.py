"""The decorator API over the low-level server, for people wrapping their own engine.

>>> app = App("my-engine", "1.0")
>>> @app.retrieve(max_k=50, modes=["sparse"])
... def retrieve(params: RetrieveParams, ctx: RequestContext) -> RetrieveResult: ...
>>> app.run_stdio()

Every RCP method is a decorator named after it (``index/add`` → ``app.index_add``);
keyword arguments are the method's capability metadata (snake_case).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from rcpkit.protocol.base import Wire
from rcpkit.protocol.methods import by_python_name
from rcpkit.server.lowlevel import CAPABILITY_TYPES, HandlerMode, Server
from rcpkit.server.runner import run_stdio

__all__ = ["App"]

F = TypeVar("F", bound=Callable[..., Any])


class App:
    """A Server plus one decorator per RCP method."""

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
            self.server.handle(
                name, handler, capability=_capability(name, capability, metadata), mode=mode
            )
            return handler

        return register

    def advertise(self, key: str, **metadata: Any) -> None:
        """Advertise a capability that is not a method (``streaming``, ``filter``, …)."""
        capability_type = CAPABILITY_TYPES.get(key)
        value = capability_type(**metadata) if capability_type is not None else metadata
        self.server.advertise(key, value)

    def __getattr__(self, python_name: str) -> Callable[..., Callable[[F], F]]:
        spec = by_python_name(python_name)
        if spec is None or spec.capability is None:
            raise AttributeError(python_name)
        return lambda **options: self.method(spec.name, **options)

    async def serve_stdio(self, **options: Any) -> None:
        await self.server.serve_stdio(**options)

    def run_stdio(self, **options: Any) -> None:
        """Serve this process's stdin/stdout until shutdown or EOF."""
        run_stdio(self.server, **options)


def _capability(
    name: str, capability: Wire | dict[str, Any] | None, metadata: dict[str, Any]
) -> Wire | dict[str, Any] | None:
    if capability is not None or not metadata:
        return capability
    spec = by_python_name(name.replace("/", "_"))
    if spec is None or spec.capability is None:
        return metadata  # an extension's capability object
    return CAPABILITY_TYPES[spec.capability](**metadata)
