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

__all__ = ["collector_paused"]

_lock = threading.Lock()
_writes = 0  # writes in progress, on any thread
_was_enabled = False  # the collector's state when the first of them began


@contextmanager
def collector_paused() -> Iterator[None]:
    """No automatic collection until every write in progress ends (nests, any thread)."""
    global _writes, _was_enabled
    with _lock:
        if _writes == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _writes += 1
    try:
        yield
    finally:
        with _lock:
            _writes -= 1
            if _writes == 0 and _was_enabled:
                gc.enable()
