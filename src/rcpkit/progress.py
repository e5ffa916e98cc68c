"""Progress on stderr: tqdm bars on a terminal, a plain line every few seconds otherwise.

One `Board` holds named counters (``files``, ``chunks``, ``queries``…), each with
a done count and either a total fixed when it is created or none. A counter
whose total is not known yet (chunks, while files are still being parsed)
shows a count and a rate, never a percentage or an ETA: a total that grew
under a bar made it reach 100 % and fall back, and its ETA swing (issue 36).
On a terminal each counter is a tqdm bar (done/total, rate, ETA) and the first
one carries the current item; elsewhere (cron, a redirected stderr) a line like
``indexing: files 12/291 (3.1/s, ETA 0:01:30), chunks 800 (31.2/s), now a.pdf``
is printed at most every ``interval`` seconds, and once at the start and the end
(``interval=math.inf``: only the last line, for a run whose output is a summary).

A counter made with ``eta=False`` shows its total but no ETA, so that one counter
(``rcpkit index``'s bytes) carries the run's only estimate; a ``bytes`` counter is
drawn in kB/MB; `retotal` shrinks a total by work found not to be needed (unchanged
files), so a rate of work done is set against the work that remains (issue 51).
"""

from __future__ import annotations

import io
import math
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TextIO

__all__ = ["Board"]

_PLAIN_INTERVAL = 5.0
# tqdm's default without the time left: "files  12/291 [00:03, 3.1file/s, a.pdf]".
_NO_ETA = "{desc}: {n_fmt}/{total_fmt} [{elapsed}, {rate_fmt}{postfix}]"


@dataclass(slots=True)
class _Counter:
    name: str
    total: int | None  # None: not known (no percentage, no ETA)
    done: int = 0
    bar: Any = None
    eta: bool = True  # False: a total shown without an estimate of the time left
    unit: str | None = None
    since: float = 0.0  # when it was made: its rate is of its own time, not the board's


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
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._leave = leave
        self._label = label
        self._stream = stream or sys.stderr
        self._interval = interval
        self._bars = self._stream.isatty() if bars is None else bars
        self._counters: dict[str, _Counter] = {}
        self._clock = clock
        self._started = clock()
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

    def counter(
        self, name: str, total: int | None, unit: str | None = None, *, eta: bool = True
    ) -> None:
        """A counter of ``total`` items (``None``: a count without a total).

        ``eta=False``: no estimate of the time left (another counter carries it).
        """
        entry = _Counter(name, total, eta=eta, unit=unit, since=self._clock())
        if self._bars:
            from tqdm import tqdm

            entry.bar = tqdm(
                total=total,
                desc=f"{name:<7}",
                unit=unit or name.rstrip("s"),
                unit_scale=unit == "B",
                unit_divisor=1000,
                bar_format=None if eta else _NO_ETA,
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
        quiet = self._bars or math.isinf(self._interval)
        if not quiet and self._clock() - self._printed >= self._interval:
            self._plain()

    def retotal(self, name: str, total: int) -> None:
        """``name``'s total is now ``total`` (work found not to be needed is taken off)."""
        entry = self._counters[name]
        entry.total = total
        if entry.bar is not None:
            entry.bar.total = total
            entry.bar.refresh()

    def close(self) -> None:
        if self._bars:
            for entry in self._counters.values():
                entry.bar.close()
        elif self._counters:
            self._plain(final=True)
        self._counters.clear()

    def _plain(self, final: bool = False) -> None:
        self._printed = self._clock()
        elapsed = max(self._printed - self._started, 1e-9)
        parts = [
            _plain_counter(entry, max(self._printed - entry.since, 1e-9))
            for entry in self._counters.values()
        ]
        if final:
            tail = f" in {_clock(elapsed)}"
        else:
            tail = f", now {self._current}" if self._current else ""
        print(f"{self._label}: {', '.join(parts)}{tail}", file=self._stream, flush=True)


def _plain_counter(entry: _Counter, elapsed: float) -> str:
    """``chunks 800 (31.2/s)``, ``bytes 1.2 MB/3.0 MB (0.1 MB/s, ETA 0:00:18)``."""
    rate = entry.done / elapsed
    amount = _bytes if entry.unit == "B" else str
    shown = (
        amount(entry.done) if entry.total is None else f"{amount(entry.done)}/{amount(entry.total)}"
    )
    text = f"{entry.name} {shown}"
    per_second = f"{_bytes(rate)}/s" if entry.unit == "B" else f"{rate:.1f}/s"
    if entry.done and entry.eta and entry.total is not None and entry.total > entry.done:
        return f"{text} ({per_second}, ETA {_clock((entry.total - entry.done) / rate)})"
    return f"{text} ({per_second})" if entry.done else text


def _bytes(count: float) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if count >= size:
            return f"{count / size:.1f} {unit}"
    return f"{count:.0f} B"


def _columns(stream: TextIO) -> int:
    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        return 0


def _clock(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 3600}:{whole % 3600 // 60:02d}:{whole % 60:02d}"
