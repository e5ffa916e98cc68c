"""The float32 vector matrix held once in RAM for every ``serve --workers`` worker.

Issue 31 item 1: the worker processes of ``rcpkit serve --http --workers N``
share the read-side state, so the second worker costs far less memory than the
first. Since issue 51 ``index.mirror`` holds no vectors (SQLite's ``chunks``
rows are their only copy on disk) and each worker read its own matrix: 147 MB
more per worker at 100k x 384. So the workers' supervisor gives them a folder
in RAM (``/dev/shm``, else its temporary folder; ``transport/http/workers.py``)
and the first worker to load the matrix from SQLite writes it there, into a file
filled through a shared mapping, then renamed into place; every later (or
restarted) worker maps that file instead of reading its own copy.

The file is only ever a head start, like the cache it goes with:

- Its header holds the stamp it was written for (the index's cache stamp, the
  version and floor of the cache whose rows it holds, the CRC of their keys and
  the matrix's shape) and the CRC of the rows: a file of another stamp, size or
  checksum is ignored (logged) and the worker reads SQLite as before.
- The caller compares its sampled rows with the file's (``_mirror_cache``).
- Space is allocated before a byte is written (``posix_fallocate``): a full
  ``/dev/shm`` is an error here, never a SIGBUS later.

Only the rows a cache covers are shared. Each process maps the file privately
(copy-on-write) and the file has room past them, an eighth of their size: a
worker appends the rows of later commits there, into pages of its own, and
keeps sharing the rest. Once that room is full, the next append copies the
matrix into the worker's memory (``Growable``), as every append did with the
mapped cache before issue 51. The room is allocated with the rows (zeros, once
for all workers): a write to a hole in a tmpfs file allocates a page of the
file even through a private mapping, and on a full ``/dev/shm`` that is a SIGBUS.
"""

from __future__ import annotations

import hashlib
import json
import logging
import mmap
import os
import secrets
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from rcpkit.engine.index.dense import DensePolicy

__all__ = ["SHARED_MIN_ROWS", "SharedVectors"]

_log = logging.getLogger(__name__)
Matrix = npt.NDArray[np.float32]
# From this many rows exact search scans the int8 codes and rescores a few float rows
# (index/dense.py): the matrix may live in shared pages. Below it, the float product
# scans it all per query and each worker's anonymous (huge-page) copy is faster.
SHARED_MIN_ROWS = DensePolicy().quantized_min_size
_MAGIC = b"RCPVECS1"
_HEAD = 4096  # magic, header length, the JSON header; the rows start page-aligned after
_ROOM = 0.125  # room past the rows for later commits' rows, as a share of them


class SharedVectors:
    """One index's matrix in ``folder``, shared by the processes that map it."""

    def __init__(self, folder: Path, stamp: str) -> None:
        name = hashlib.sha256(stamp.encode()).hexdigest()[:16]
        self.path = folder / f"vectors-{name}.f32"

    def mapped(self, stamp: dict[str, Any], shape: tuple[int, int]) -> Matrix | None:
        """The file's rows when it was written for ``stamp`` and is whole; else None.

        The matrix has room past ``shape[0]`` rows (zeros until this process writes them:
        its own pages, never the file's)."""
        try:
            return self._map(stamp, shape)
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError) as error:
            _log.warning("ignoring the shared vectors %s (%s)", self.path, error)
            return None

    def _map(self, stamp: dict[str, Any], shape: tuple[int, int]) -> Matrix:
        with self.path.open("rb") as file:
            mapped = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_COPY)
        if len(mapped) != _HEAD + _capacity(shape[0]) * shape[1] * 4 or mapped[:8] != _MAGIC:
            raise ValueError("another size or not a vector file")
        length = int.from_bytes(mapped[8:12], "little")
        header = json.loads(mapped[12 : 12 + length])
        if header["stamp"] != stamp:
            raise ValueError("written for another cache")
        matrix = _rows(mapped, (_capacity(shape[0]), shape[1]))
        if zlib.crc32(matrix[: shape[0]].data) != header["crc"]:
            raise ValueError("checksum")
        return matrix

    def write(
        self, stamp: dict[str, Any], shape: tuple[int, int], fill: Callable[[Matrix], Matrix]
    ) -> Matrix:
        """``fill`` (which writes the rows into the matrix it is given) run on the file's
        mapping, the file then renamed into place: its rows, shared. If the folder
        cannot take it, ``fill`` runs on this process's own matrix."""
        temporary = self.path.with_name(f"{self.path.name}.{os.getpid()}.{secrets.token_hex(4)}")
        try:
            self._fill(temporary, stamp, shape, fill)
            os.replace(temporary, self.path)
            return self._map(stamp, shape)  # this process's appends go to its own pages
        except OSError as error:
            _log.warning("could not share the vectors in %s (%s)", self.path.parent, error)
            return fill(np.empty(shape, dtype=np.float32))
        finally:
            temporary.unlink(missing_ok=True)

    def _fill(
        self,
        temporary: Path,
        stamp: dict[str, Any],
        shape: tuple[int, int],
        fill: Callable[[Matrix], Matrix],
    ) -> None:
        size = _HEAD + shape[0] * shape[1] * 4
        descriptor = os.open(temporary, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            # The rows and the room: ENOSPC now, not SIGBUS on a write to the mapping.
            os.posix_fallocate(descriptor, 0, _HEAD + _capacity(shape[0]) * shape[1] * 4)
            mapped = mmap.mmap(descriptor, size, access=mmap.ACCESS_WRITE)
        finally:
            os.close(descriptor)
        matrix = fill(_rows(mapped, shape))
        text = json.dumps({"stamp": stamp, "crc": zlib.crc32(matrix.data)}).encode()
        if 12 + len(text) > _HEAD:
            raise OSError("the stamp does not fit the header")
        mapped[: 12 + len(text)] = _MAGIC + len(text).to_bytes(4, "little") + text


def _capacity(rows: int) -> int:
    return rows + max(int(rows * _ROOM), 1)


def _rows(mapped: mmap.mmap, shape: tuple[int, int]) -> Matrix:
    count = shape[0] * shape[1]
    rows: Matrix = np.frombuffer(mapped, dtype="<f4", count=count, offset=_HEAD)
    return rows.reshape(shape)
