"""Progress on stderr: tqdm bars on a terminal, a plain line every few seconds otherwise.

One `Board` holds named counters (``files``, ``chunks``, ``queries``…), each with
a done count and either a total fixed when it is created or none. A counter
whose total is not known yet (chunks, while files are still being parsed)
shows a count and a rate, never a percentage or an ETA: a total that grew
under a bar made it reach 100 % and fall back, and its ETA swing (issue 36).
On a terminal each counter is a tqdm bar (done/total, rate, ETA) and the first
one carries the current item; elsewhere (cron, a redirected stderr) a line like
``indexing: files 12/291 (3.1/s, ETA 0:01:30), chunks 800 (31.2/s), now a.pdf``
is printed at most every ``interval`` seconds, and once at the start and the end.
"""

from __future__ import annotations

import io
import math
import os
import sys
import time
from dataclasses import dataclass
from typing import Any, TextIO

__all__ = ["Board"]

_PLAIN_INTERVAL = 5.0


@dataclass(slots=True)
class _Counter:
    name: str
    total: int | None  # None: not known (no percentage, no ETA)
    done: int = 0
    bar: Any = None


class Board:
    """Counters drawn on ``stream`` (stderr by default); use as a context manager."""

    def __init__(
        self,
        label: str,
        *,
        stream: TextIO | None = None,
        interval: float = _PLAIN_INTERVAL,
        bars: bool | None = None,
        leave: bool = True,
    ) -> None:
        self._leave = leave
        self._label = label
        self._stream = stream or sys.stderr
        self._interval = interval
        self._bars = self._stream.isatty() if bars is None else bars
        self._counters: dict[str, _Counter] = {}
        self._started = time.monotonic()
        self._printed = -math.inf  # the first update prints at once
        self._current = ""
        if self._bars:
            try:
                import tqdm  # noqa: F401
            except ImportError:
                self._bars = False

    def __enter__(self) -> Board:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def say(self, message: str) -> None:
        """One line at once (the first output, before any counter exists)."""
        print(f"{self._label}: {message}", file=self._stream, flush=True)

    def counter(self, name: str, total: int | None, unit: str | None = None) -> None:
        """A counter of ``total`` items (``None``: a count without a total)."""
        entry = _Counter(name, total)
        if self._bars:
            from tqdm import tqdm

            entry.bar = tqdm(
                total=total,
                desc=f"{name:<7}",
                unit=unit or name.rstrip("s"),
                file=self._stream,
                position=len(self._counters),
                leave=self._leave,
                # A terminal that reports no width (a bare pty) would get empty bars.
                dynamic_ncols=_columns(self._stream) > 0,
                ncols=None if _columns(self._stream) > 0 else 100,
                nrows=None if _columns(self._stream) > 0 else 24,
                smoothing=0.1,
            )
        self._counters[name] = entry

    def update(self, name: str, done: int, current: str | None = None) -> None:
        """``name`` has ``done`` items done; ``current`` is the item being worked on."""
        entry = self._counters[name]
        if current is not None:
            self._current = current
        if entry.bar is not None:
            entry.bar.update(done - entry.done)
            if current is not None:
                first = next(iter(self._counters.values()))
                first.bar.set_postfix_str(current[-40:], refresh=True)
        entry.done = done
        if not self._bars and time.monotonic() - self._printed >= self._interval:
            self._plain()

    def close(self) -> None:
        if self._bars:
            for entry in self._counters.values():
                entry.bar.close()
        elif self._counters:
            self._plain(final=True)
        self._counters.clear()

    def _plain(self, final: bool = False) -> None:
        self._printed = time.monotonic()
        elapsed = max(self._printed - self._started, 1e-9)
        parts = []
        for entry in self._counters.values():
            rate = entry.done / elapsed
            shown = entry.done if entry.total is None else f"{entry.done}/{entry.total}"
            text = f"{entry.name} {shown}"
            if entry.done and entry.total is not None and entry.total > entry.done:
                text += f" ({rate:.1f}/s, ETA {_clock((entry.total - entry.done) / rate)})"
            elif entry.done:
                text += f" ({rate:.1f}/s)"
            parts.append(text)
        if final:
            tail = f" in {_clock(elapsed)}"
        else:
            tail = f", now {self._current}" if self._current else ""
        print(f"{self._label}: {', '.join(parts)}{tail}", file=self._stream, flush=True)


def _columns(stream: TextIO) -> int:
    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        return 0


def _clock(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 3600}:{whole % 3600 // 60:02d}:{whole % 60:02d}"
