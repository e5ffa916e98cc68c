"""The cyclic garbage collector held off while a write builds and commits its rows.

A write allocates several containers per chunk (its rows, token lists, word
sets, the mirror's rows) that all live until the commit ends; every 700
allocations start a collection that traverses them, and every few batches a
full one traverses the whole heap: a third of an add's time went to the
collector (issue 51.5: 20,000 chunks, 1.2 s of 3.4 s). Nothing the write makes
is freed by the collector (no cycles); what others make in the meantime is
collected when the last write ends. Mercurial's ``util.nogc`` does the same for
its bulk reads.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["ENDS_PER_COLLECTION", "collector_paused"]

# Writes that overlap without end (a busy server's) would hold it off for good and
# let cyclic garbage grow: every this many writes ending while others still run,
# one full collection runs in the meantime.
ENDS_PER_COLLECTION = 64

_lock = threading.Lock()
_writes = 0  # writes in progress, on any thread
_was_enabled = False  # the collector's state when the first of them began
_ended = 0  # writes ended since the pause began or since its last collection


@contextmanager
def collector_paused() -> Iterator[None]:
    """No automatic collection until every write in progress ends (nests, any thread);
    one full collection every ``ENDS_PER_COLLECTION`` writes ended in the meantime."""
    global _writes, _was_enabled, _ended
    with _lock:
        if _writes == 0:
            _was_enabled = gc.isenabled()
            _ended = 0
            gc.disable()
        _writes += 1
    try:
        yield
    finally:
        with _lock:
            _writes -= 1
            _ended += 1
            collect = _writes > 0 and _was_enabled and _ended >= ENDS_PER_COLLECTION
            if collect:
                _ended = 0
            elif _writes == 0 and _was_enabled:
                gc.enable()
        if collect:  # outside the lock: a finaliser it runs may start a write
            gc.collect()
