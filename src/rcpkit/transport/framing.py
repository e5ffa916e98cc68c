"""NDJSON framing (§5.1): bytes in arbitrary chunks → complete lines, bounded in size."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LineSplitter", "Oversized"]


@dataclass(frozen=True, slots=True)
class Oversized:
    """A line longer than the limit; its bytes were dropped as they arrived."""

    size: int


class LineSplitter:
    """Split a byte stream into lines without holding more than ``limit`` bytes of one.

    §5.1: messages may be split across reads or several may share one read;
    blank lines are ignored. A line above ``limit`` bytes is discarded while it
    streams in and reported once as :class:`Oversized` when its newline arrives.
    """

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._buffer = bytearray()
        self._discarding = 0  # bytes of an oversized line dropped so far

    def feed(self, data: bytes) -> list[bytes | Oversized]:
        out: list[bytes | Oversized] = []
        start = 0
        while True:
            newline = data.find(b"\n", start)
            if newline < 0:
                self._keep(data[start:])
                return out
            self._finish(data[start:newline], out)
            start = newline + 1

    def finish(self) -> list[bytes | Oversized]:
        """At end of input: an unterminated last line still counts as a line."""
        out: list[bytes | Oversized] = []
        self._finish(b"", out)
        return out

    def _keep(self, piece: bytes) -> None:
        if self._discarding:
            self._discarding += len(piece)
        elif len(self._buffer) + len(piece) > self._limit:
            self._discarding = len(self._buffer) + len(piece)
            self._buffer.clear()
        else:
            self._buffer += piece

    def _finish(self, piece: bytes, out: list[bytes | Oversized]) -> None:
        if self._discarding:
            out.append(Oversized(self._discarding + len(piece)))
            self._discarding = 0
            return
        if self._buffer:
            self._buffer += piece
            line = bytes(self._buffer)
            self._buffer.clear()
        else:
            line = piece
        if len(line) > self._limit:
            out.append(Oversized(len(line)))
        elif line.strip():
            out.append(line)
