"""What every transport offers the dispatcher: decoded frames in, encoded frames out."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol

from rcpkit.codec import Frame

__all__ = ["Transport"]


class Transport(Protocol):
    """A duplex stream of frames. It knows framing and bytes, nothing of methods.

    ``frames`` yields decoded frames (a bad line is an ``Invalid`` value, never
    an exception) and ends at end of input. ``send`` queues one encoded
    message without blocking; queued messages are coalesced into few writes.
    ``drain`` resolves once everything queued has been handed to the OS.
    """

    def frames(self) -> AsyncIterator[Frame]: ...

    def send(self, data: bytes) -> None: ...

    async def drain(self) -> None: ...

    async def close(self) -> None: ...
