"""An append-only numpy array that readers can slice while one writer appends.

Rows are written past the length every published view covers, and a full
buffer is replaced by one twice as large (the old one stays alive for the
readers still holding views of it), so a view never changes under a reader.
Appending is amortised O(rows added), not O(rows held) as ``np.concatenate``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["Growable"]


class Growable:
    def __init__(self, dtype: Any, width: int | None = None, capacity: int = 0) -> None:
        shape = (capacity,) if width is None else (capacity, width)
        self._buffer: npt.NDArray[Any] = np.empty(shape, dtype=dtype)
        self._size = 0

    def __len__(self) -> int:
        return self._size

    @classmethod
    def adopt(cls, rows: npt.NDArray[Any], size: int | None = None) -> Growable:
        """Hold ``rows`` as they are (a loaded or memory-mapped array, possibly read-only).

        ``size``: the first ``size`` rows are held and appends write the rest (a
        writable buffer with room: a private mapping of a shared file). The rows held
        are never written: an append past the buffer copies it into a larger one.
        """
        grown = cls(rows.dtype, None if rows.ndim == 1 else rows.shape[1])
        grown._buffer, grown._size = rows, len(rows) if size is None else size
        return grown

    def reserve(self, capacity: int) -> None:
        if capacity > len(self._buffer):
            grown = np.empty((capacity, *self._buffer.shape[1:]), dtype=self._buffer.dtype)
            grown[: self._size] = self._buffer[: self._size]
            self._buffer = grown

    def extend(self, rows: npt.ArrayLike) -> None:
        block = np.asarray(rows, dtype=self._buffer.dtype)
        if not len(block):
            return
        end = self._size + len(block)
        if end > len(self._buffer):
            self.reserve(max(end, 2 * len(self._buffer), 1024))
        self._buffer[self._size : end] = block
        self._size = end

    def view(self) -> npt.NDArray[Any]:
        """The rows appended so far (a view: later appends never change it)."""
        return self._buffer[: self._size]
