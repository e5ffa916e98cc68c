"""What a session needs of a server: its handlers, as registered, and what it advertises.

``rcpkit.server.lowlevel.Server`` is the implementation; the session, the
dispatcher and the runner see it through :class:`Served` only, so the server
tiers can offer ``serve_stdio`` on top of the runner without an import circle.
``Handler`` types a typed-tier handler and ``Registrar`` is what the generated
decorators (``server/_decorators.py``) register through, ``App``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeAlias, TypeVar

from rcpkit.protocol.capabilities import Capabilities
from rcpkit.server.context import RequestContext

__all__ = ["Handler", "HandlerMode", "Registrar", "Registration", "Served"]

HandlerMode = Literal["async", "thread", "inline"]

P = TypeVar("P")
R = TypeVar("R")
F = TypeVar("F", bound=Callable[..., Any])

# A typed-tier handler: ``(params)`` or ``(params, ctx)``, plain or async; it may
# return the result struct or a mapping in the result's wire shape.
Handler: TypeAlias = (
    Callable[[P], R | Mapping[str, Any] | Awaitable[R | Mapping[str, Any]]]
    | Callable[[P, RequestContext], R | Mapping[str, Any] | Awaitable[R | Mapping[str, Any]]]
)


class Registrar(ABC):
    """Registers what a generated decorator decorates (``App`` implements it)."""

    @abstractmethod
    def _register(self, name: str, given: dict[str, Any]) -> Callable[[F], F]:
        """Register the decorated handler for ``name``; ``given``: the decorator's locals()."""


@dataclass(frozen=True, slots=True)
class Registration:
    """A handler and how the runtime calls it.

    ``async``: a coroutine function, one task per request. ``thread``: a plain
    function run in the worker pool, off the event loop (CPU-bound engines).
    ``inline``: a plain function cheap enough to run on the loop itself.
    """

    handler: Callable[..., Any]
    mode: HandlerMode
    takes_context: bool


class Served(Protocol):
    """A server as its sessions see it."""

    name: str

    @property
    def capabilities(self) -> Capabilities:
        """What is advertised, derived from the registrations (fixed once serving, §13.2)."""
        ...

    @property
    def unavailable_modalities(self) -> Mapping[str, str]:
        """Modalities not offered for a reason worth naming (a missing extra), §4.8."""
        ...

    @property
    def fetchable_uris(self) -> Sequence[str]:
        """URI prefixes a Content block's ``uri`` may be fetched from (§4.8); () for none."""
        ...

    @property
    def declared_array_fields(self) -> frozenset[str] | None:
        """Filter fields holding arrays (§8 ``contains``); None: not said, so every field."""
        ...

    def registration(self, method: str) -> Registration | None: ...

    def info_result(self, version: int = 1) -> dict[str, Any]: ...
