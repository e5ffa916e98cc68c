"""What a session needs of a server: its handlers, as registered, and what it advertises.

``rcpkit.server.lowlevel.Server`` is the implementation; the session, the
dispatcher and the runner see it through :class:`Served` only, so the server
tiers can offer ``serve_stdio`` on top of the runner without an import circle.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from rcpkit.protocol.capabilities import Capabilities

__all__ = ["HandlerMode", "Registration", "Served"]

HandlerMode = Literal["async", "thread", "inline"]


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
