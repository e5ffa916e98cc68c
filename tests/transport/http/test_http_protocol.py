"""The coalescing transport under uvicorn's protocol: one write per loop turn."""

from __future__ import annotations

import asyncio
from typing import Any

from rcpkit.transport.http.protocol import CoalescingTransport


class Recording(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []
        self.closed = False
        self.aborted = False

    def write(self, data: Any) -> None:
        self.writes.append(bytes(data))

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.aborted = True

    def is_closing(self) -> bool:
        return self.closed or self.aborted

    def get_write_buffer_size(self) -> int:
        return 0


async def next_turn() -> None:
    """Resume after every callback already scheduled on the loop has run."""
    turned = asyncio.get_running_loop().create_future()
    asyncio.get_running_loop().call_soon(turned.set_result, None)
    await asyncio.wait_for(turned, 1)


async def test_writes_in_one_loop_turn_leave_in_one_write() -> None:
    inner = Recording()
    transport = CoalescingTransport(inner, asyncio.get_running_loop())
    transport.write(b"HTTP/1.1 200 OK\r\n\r\n")
    transport.write(b"body")
    assert inner.writes == []
    assert transport.get_write_buffer_size() == len(b"HTTP/1.1 200 OK\r\n\r\nbody")
    await next_turn()
    assert inner.writes == [b"HTTP/1.1 200 OK\r\n\r\nbody"]
    transport.write(b"next")
    await next_turn()
    assert inner.writes[-1] == b"next"


async def test_close_writes_what_is_pending_first_and_abort_drops_it() -> None:
    loop = asyncio.get_running_loop()
    inner = Recording()
    transport = CoalescingTransport(inner, loop)
    transport.write(b"413 answer")
    transport.close()
    assert (inner.writes, inner.closed) == ([b"413 answer"], True)
    other = Recording()
    dropped = CoalescingTransport(other, loop)
    dropped.write(b"never")
    dropped.abort()
    await next_turn()
    assert (other.writes, other.aborted) == ([], True)
