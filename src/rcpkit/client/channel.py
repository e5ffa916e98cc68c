"""What the client needs of a transport: encoded frames out, decoded messages in.

A channel knows framing and bytes (NDJSON pipes, HTTP POST and SSE), never
methods beyond the one it must put in an HTTP path. The connection above it
knows ids, futures and notifications, never bytes (STYLE §1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from rcpkit.codec import Message
from rcpkit.protocol.base import Id
from rcpkit.protocol.errors import RCPError

__all__ = ["Channel", "Outgoing", "Receiver"]


@dataclass(frozen=True, slots=True)
class Outgoing:
    """One encoded message to send: a request (with ``id``) or a notification."""

    data: bytes
    method: str
    id: Id | None = None
    # The caller asked for progress (over HTTP: request an SSE stream, §5.2).
    stream: bool = False


class Receiver(Protocol):
    """Where a channel hands what it reads."""

    def deliver(self, message: Message) -> None:
        """A decoded message from the server (a response or a notification)."""

    def fail(self, id: Id, error: RCPError) -> None:
        """A transport-level failure of the one request ``id`` (an HTTP exchange)."""

    def lost(self, reason: str) -> None:
        """The whole channel died (stdio EOF/EPIPE); nothing more will arrive."""


class Channel(Protocol):
    """A duplex path to one server."""

    @property
    def description(self) -> str:
        """A short human label (``stdio: python -m …``, ``http://…``) for errors."""

    async def open(self, receiver: Receiver) -> None:
        """Start the channel; messages go to ``receiver`` from here on."""

    def send(self, message: Outgoing) -> None:
        """Queue one message without blocking."""

    def abandon(self, id: Id) -> None:
        """The caller gave up on request ``id`` (cancel, deadline): free what it holds."""

    def renew(self) -> bool:
        """Forget per-session state so that a new ``initialize`` starts afresh.

        True when the channel can do that (an HTTP session that expired, §5.2);
        a stream is one session for its whole life (§13) and says False.
        """

    async def close(self) -> None:
        """Close, bounded in time; also ends a spawned server process."""
