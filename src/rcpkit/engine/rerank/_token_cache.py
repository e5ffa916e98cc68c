"""A bounded LRU of passage token matrices, keyed by a digest of the passage text."""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from typing import NamedTuple

from rcpkit.engine.models import Vectors

__all__ = ["TokenCacheInfo", "TokenMatrixCache", "text_key"]


def text_key(text: str) -> bytes:
    """A 16-byte blake2b digest: fixed-size keys however long the passage.

    `surrogatepass` so that a lone surrogate (legal in a Python str) still hashes.
    """
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class TokenCacheInfo(NamedTuple):
    """Counters for judging whether the cache pays: lookups that hit or missed, and its size."""

    hits: int
    misses: int
    entries: int
    bytes: int


class TokenMatrixCache:
    """Least-recently-used matrices, bounded by entry count and by total bytes.

    Both bounds matter: a 254-token MiniLM passage is ~390 KB of float32, so an
    entry bound alone would let long passages take far more memory than short
    ones. Stored matrices are made read-only, since every caller shares them.
    A lock makes it safe for the worker threads that score concurrently.
    """

    def __init__(self, max_entries: int, max_bytes: int) -> None:
        if max_entries < 0 or max_bytes < 0:
            raise ValueError("cache bounds must be >= 0")
        self._max_entries = max_entries
        self._max_bytes = max_bytes
        self._matrices: OrderedDict[bytes, Vectors] = OrderedDict()
        self._bytes = 0
        self._hits = 0
        self._misses = 0
        self._lock = threading.Lock()

    def get(self, key: bytes) -> Vectors | None:
        """The matrix stored under `key`, now most recently used, or None."""
        with self._lock:
            matrix = self._matrices.get(key)
            if matrix is None:
                self._misses += 1
                return None
            self._hits += 1
            self._matrices.move_to_end(key)
            return matrix

    def put(self, key: bytes, matrix: Vectors) -> Vectors:
        """Store `matrix` (read-only from now on) and evict the least recently used."""
        matrix.flags.writeable = False
        if matrix.nbytes > self._max_bytes or self._max_entries == 0:
            return matrix
        with self._lock:
            previous = self._matrices.pop(key, None)
            if previous is not None:
                self._bytes -= previous.nbytes
            self._matrices[key] = matrix
            self._bytes += matrix.nbytes
            while len(self._matrices) > self._max_entries or self._bytes > self._max_bytes:
                _, evicted = self._matrices.popitem(last=False)
                self._bytes -= evicted.nbytes
        return matrix

    def info(self) -> TokenCacheInfo:
        """Current counters."""
        with self._lock:
            return TokenCacheInfo(self._hits, self._misses, len(self._matrices), self._bytes)

    def clear(self) -> None:
        """Drop every matrix; the counters stay."""
        with self._lock:
            self._matrices.clear()
            self._bytes = 0
