"""A store's mirror, saved to a local file so a new process need not rebuild it.

The embedded store saves it beside its SQLite file; a PostgreSQL server in its
``--index`` folder (``postgres.mirror``): a first BM25 read of a 100k-chunk
database rebuilt the mirror over the network in 20 s. Either way it is checked
against the system of record on load as below, so a server stays stateless:
the file is a head start any server may lack or lose.

Issue 15: opening a 100k-chunk index rebuilt the mirror from every row (tokens,
JSON metadata, vectors): 12 s on a quiet machine, 40 s under load. The mirror
(:class:`~rcpkit.engine.index._mirror.Frozen`: row keys and versions, postings,
filter columns) is written to ``index.mirror`` and, on open, read back without
parsing a row: the postings and row arrays are views of a memory map (their
pages shared by every process mapping the file).

The vectors are not in it (format 3, issue 51): SQLite's ``chunks`` rows hold
them already, and a second float32 copy was 1,536 of the 4,338 bytes a chunk
took on disk. A load reads them from the file in key order, in batches, straight
into one matrix (``_matrix``); a format-2 cache, which holds them, is read the
same way, its matrix section left unread, and rewritten at the next save. Given
a folder in RAM (``shared``: the workers of ``serve --workers N``), a matrix of
``SHARED_MIN_ROWS`` rows or more is read into a file there once and mapped by
every worker (``_shared_vectors``).

SQLite stays the system of record; this file is only ever a head start:

- It is stamped with the file's identity (the ``dense.identity`` setting, random
  per index) and the version and floor it covers; its last row and 64 rows
  spread over it must have the key, version and tenant the file gives them, and
  their vectors the checksums saved with the cache (``vectors``) — so another
  index's cache, a cache from a newer copy of this index, or one of a file that
  was restored from a backup and written since is never trusted.
- Every section carries a CRC-32 and the trailer a length: a truncated, torn or
  corrupt file, or one of another format, is ignored (logged, never raised) and
  the mirror is rebuilt from SQLite.
- A valid cache is followed from its version like any other process's commits
  (``Mirror._follow``): rows added since are read, retirements since applied,
  rows collected since found missing. So a crash between a SQLite commit and a
  save costs only the replay of what the cache lacks.
- It is written off the request path, on a daemon thread (once enough rows
  changed, when commits pause, no sooner than ``interval`` seconds after the
  last save and spending at most 5 % of the time saving), and on close; to a
  temporary file renamed over the old one, so a reader sees the old file or
  the new one, never a mix.

Layout: the sections (raw little-endian arrays, 64-byte aligned), then a JSON
header (offsets, shapes, CRCs, the stamp, the sampled rows' vector checksums,
the terms, the tenants, the filter columns' values), then a 32-byte trailer
(magic, header offset and length, CRC).
"""

from __future__ import annotations

import json
import logging
import mmap
import os
import secrets
import struct
import threading
import time
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from rcpkit.engine.index._mirror import Frozen, Mirror, Reading
from rcpkit.engine.index._postings import FrozenPostings
from rcpkit.engine.index._shared_vectors import SHARED_MIN_ROWS, SharedVectors

__all__ = ["MirrorCache", "cache_stamp"]

_log = logging.getLogger(__name__)
Matrix = npt.NDArray[np.float32]
_FORMAT = 3  # 2: weighted tf as float32 (fractional title weights); 3: no vectors
_READS = (2, 3)  # a format 2's matrix section is left unread
_MAGIC = b"RCPMIRR1"
_TRAILER = struct.Struct("<8sQQI4x")
_ALIGN = 64
_ROWS = ("keys", "added", "removed", "tenants", "lengths")
_SAMPLED_ROWS = 64  # rows (the first and last among them) compared with the file on load


def cache_stamp(identity: str, title_weight: float, body_weight: float) -> str:
    """What a cache is stamped with: its index's identity and the column weights its
    postings hold. Another index's cache never fits; nor one weighted otherwise."""
    return f"{identity} tf {title_weight:g}/{body_weight:g}"


class Invalid(Exception):
    """The cache cannot be trusted (why, for the log)."""


class MirrorCache:
    """``index.mirror`` beside one SQLite file: loaded on open, saved in the background.

    ``rows``: follows changing at least this many rows (or a twentieth of the
    index, if more) make a save due; ``quiet``: seconds without a follow before a
    due save starts, but no more than ``patience`` seconds after it fell due
    (writes that never pause); ``interval``: seconds from one save to the next
    at least. A bulk load is thus saved a few times, not after every batch:
    with a save after each 5,000-chunk batch, indexing 40k chunks ran 19 %
    slower on this loaded 2-core machine (694-750 vs 865-925 chunks/s). ``vectors``:
    the mirror holds the vectors (the embedded store's; a PostgreSQL mirror never
    does, pgvector searches them), so a mirror without them yet is not saved: its
    cache would lack the sampled vectors' checksums a load checks the file with.
    ``shared``: a folder in RAM whose vector file the processes serving this index
    share (None: this process reads its own matrix).
    """

    def __init__(
        self,
        path: Path,
        identity: str,
        rows: int = 200,
        quiet: float = 1.0,
        patience: float = 10.0,
        interval: float = 30.0,
        vectors: bool = True,
        shared: Path | None = None,
    ) -> None:
        self.path = path
        self._shared = None if shared is None else SharedVectors(shared, identity)
        self._vectors = vectors
        self._identity = identity
        self._rows, self._quiet, self._patience = rows, quiet, patience
        self._interval = interval
        self._saved_version = -1  # the version of the file this process read or wrote
        self._format = _FORMAT  # of the file this process read
        self._unsaved = 0
        self._mirror: Mirror | None = None
        self._wake = threading.Condition()
        self._save_lock = threading.Lock()
        self._due = False
        self._due_since = 0.0
        self._last_follow = 0.0
        self._next_save = 0.0
        self._closed = False
        self._thread: threading.Thread | None = None

    # --- load ---

    def load(self, reading: Reading, dimension: int | None) -> Frozen | None:
        try:
            frozen = self._read(reading, dimension)
        except FileNotFoundError:
            return None
        except (Invalid, OSError, ValueError, KeyError, TypeError, IndexError) as error:
            _log.warning("ignoring the mirror cache %s (%s); rebuilding it", self.path, error)
            return None
        # A cache of an older format is rewritten at the next save (close, at the latest).
        self._saved_version = frozen.version if self._format == _FORMAT else -1
        return frozen

    def _read(self, reading: Reading, dimension: int | None) -> Frozen:
        with self.path.open("rb") as file:
            size = os.fstat(file.fileno()).st_size
            if size < _TRAILER.size:
                raise Invalid("truncated")
            mapped = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
            return self._parse(reading, dimension, mapped, size)

    def _parse(
        self, reading: Reading, dimension: int | None, mapped: mmap.mmap, size: int
    ) -> Frozen:
        header = _header(mapped, size)
        written = header.get("format")
        if written not in _READS:
            raise Invalid(f"format {written!r}, this rcpkit reads {_FORMAT}")
        self._format = int(written)
        if header.get("identity") != self._identity:
            raise Invalid("another index's cache")
        version, floor = reading.marks()
        if not (header["version"] <= version and header["floor"] <= floor):
            raise Invalid(f"covers version {header['version']}, the file is at {version}")
        wanted = [name for name in header["sections"] if name != "matrix"]
        arrays = {name: _section(mapped, header, name) for name in wanted}
        rows = len(arrays["keys"])
        if any(len(arrays[name]) != rows for name in _ROWS):
            raise Invalid("row arrays of different lengths")
        checksums = _checksums(header, mapped, rows)
        if dimension is not None and checksums is None:
            raise Invalid("saved without vectors")
        matrix = (
            None if dimension is None else self._read_vectors(reading, header, arrays, dimension)
        )
        frozen = Frozen(
            int(header["version"]),
            int(header["floor"]),
            arrays["keys"],
            arrays["added"],
            arrays["removed"],
            arrays["tenants"],
            arrays["lengths"],
            [str(name) for name in header["names"]],
            _postings(header, arrays, rows),
            {
                name: (arrays[f"column {i}"], list(values))
                for i, (name, values) in enumerate(header["columns"])
            },
            matrix,
        )
        _check(frozen, reading, checksums)
        return frozen  # its arrays but the matrix are views of the mapping, kept while they live

    def _read_vectors(
        self, reading: Reading, header: dict[str, Any], arrays: dict[str, Any], dimension: int
    ) -> Matrix:
        """The cache's rows' vectors: the shared file's when it holds them, else read from
        the file (into the shared file, when this process is given a folder for it)."""
        keys = arrays["keys"]
        shape = (len(keys), dimension)
        if self._shared is None or len(keys) < SHARED_MIN_ROWS:
            return _matrix(reading, keys, np.empty(shape, dtype=np.float32))
        stamp = {
            "index": self._identity,
            "version": int(header["version"]),
            "floor": int(header["floor"]),
            "keys": zlib.crc32(keys),
            "shape": list(shape),
        }
        shared = self._shared.mapped(stamp, shape)
        if shared is not None and _agrees(shared, keys, reading):
            return shared
        if shared is not None:
            _log.warning("ignoring the shared vectors %s: not the file's", self._shared.path)
        return self._shared.write(stamp, shape, lambda into: _matrix(reading, keys, into))

    # --- save ---

    def followed(self, mirror: Mirror, changed: int) -> None:
        with self._wake:
            self._mirror = mirror
            self._unsaved += changed
            self._last_follow = time.monotonic()
            size = mirror.snapshot.size
            first = self._saved_version < 0 and self._unsaved > 0  # rebuilt from the rows
            if first or self._unsaved >= max(self._rows, size // 20):
                if not self._due:
                    self._due, self._due_since = True, self._last_follow
                self._start()
                self._wake.notify()

    def _start(self) -> None:
        if self._thread is None and not self._closed:
            self._thread = threading.Thread(
                target=self._run, name="rcpkit-mirror-cache", daemon=True
            )
            self._thread.start()

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._due and not self._closed:
                    self._wake.wait()
                if self._closed:
                    return
                start = min(self._last_follow + self._quiet, self._due_since + self._patience)
                wait = max(start, self._next_save) - time.monotonic()
                if wait > 0:
                    self._wake.wait(wait)
                    continue
                self._due = False
            self.flush()

    def flush(self) -> None:
        """Save now if the mirror moved past the saved file (the saver thread, close)."""
        with self._save_lock:
            mirror = self._mirror
            # Without vectors (a store no dense index was opened on) it saves nothing: a
            # cache without the matrix would make the next server rebuild.
            if mirror is None or (self._vectors and mirror.dense is None):
                return
            if mirror.snapshot.version < 0:
                return
            if mirror.snapshot.version == self._saved_version and not self._unsaved:
                return
            started = time.monotonic()
            with self._wake:
                unsaved, self._unsaved = self._unsaved, 0
            try:
                # Another process on the file may have saved a later version: replacing
                # it costs the next opener a longer replay, never a wrong answer.
                frozen = mirror.freeze()
                self._write(frozen)
                self._saved_version = frozen.version
            except Exception:  # an accelerator: never fails the store
                with self._wake:
                    self._unsaved += unsaved
                _log.warning("could not save the mirror cache %s", self.path, exc_info=True)
            took = time.monotonic() - started
            self._next_save = time.monotonic() + max(self._interval, 19 * took)

    def _write(self, frozen: Frozen) -> None:
        postings = frozen.postings
        arrays: dict[str, npt.NDArray[Any]] = {
            "keys": frozen.keys,
            "added": frozen.added,
            "removed": frozen.removed,
            "tenants": frozen.tenants,
            "lengths": frozen.lengths,
            "offsets": postings.offsets,
            "positions": postings.positions,
            "weights": postings.weights,
            "largest": postings.largest,
            "shortest": postings.shortest,
        }
        columns = []
        for i, (name, (codes, values)) in enumerate(frozen.columns.items()):
            arrays[f"column {i}"] = codes
            columns.append([name, values])
        _remove_orphans(self.path)
        # Several stores in one process may save one file: the name is the pid and a token.
        token = f"{os.getpid()}.{secrets.token_hex(4)}"
        temporary = self.path.with_name(f"{self.path.name}.{token}.tmp")
        try:
            with temporary.open("wb") as file:
                sections = {name: _write_section(file, array) for name, array in arrays.items()}
                header = {
                    "format": _FORMAT,
                    "identity": self._identity,
                    "version": frozen.version,
                    "floor": frozen.floor,
                    "written": time.time(),
                    "vectors": _sampled_vectors(frozen.matrix, frozen.size),
                    "names": frozen.names,
                    "terms": postings.terms,
                    "columns": columns,
                    "sections": sections,
                }
                text = json.dumps(header).encode()
                at = file.tell()
                file.write(text)
                file.write(_TRAILER.pack(_MAGIC, at, len(text), zlib.crc32(text)))
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, self.path)
        finally:
            temporary.unlink(missing_ok=True)

    def close(self) -> None:
        """Save what is unsaved, stop the saver thread."""
        self.flush()
        with self._wake:
            self._closed = True
            self._wake.notify()
        if self._thread is not None:
            self._thread.join(5)


def _write_section(file: Any, array: npt.NDArray[Any]) -> list[Any]:
    data = np.ascontiguousarray(array)
    file.write(b"\0" * (-file.tell() % _ALIGN))
    at = file.tell()
    view = _bytes(data)
    file.write(view)
    return [at, data.dtype.str, list(data.shape), zlib.crc32(view)]


def _bytes(array: npt.NDArray[Any]) -> memoryview:
    return np.ascontiguousarray(array).reshape(-1).view(np.uint8).data


def _header(mapped: mmap.mmap, size: int) -> dict[str, Any]:
    magic, at, length, crc = _TRAILER.unpack_from(mapped, size - _TRAILER.size)
    if magic != _MAGIC:
        raise Invalid("not a mirror cache (or torn)")
    if at + length + _TRAILER.size != size:
        raise Invalid("truncated")
    text = mapped[at : at + length]
    if zlib.crc32(text) != crc:
        raise Invalid("header checksum")
    header = json.loads(text)
    if not isinstance(header, dict):
        raise Invalid("header")
    return header


def _section(mapped: mmap.mmap, header: dict[str, Any], name: str) -> npt.NDArray[Any]:
    """One array, a view of the mapping (checked against its CRC)."""
    at, dtype, shape, crc = header["sections"][name]
    kind = np.dtype(dtype)
    if kind.byteorder not in ("<", "|", "=") or kind.hasobject:
        raise Invalid(f"section {name}: dtype {dtype}")
    count = int(np.prod(shape, dtype=np.int64))
    if at % _ALIGN or at < 0 or at + count * kind.itemsize > len(mapped):
        raise Invalid(f"section {name} out of bounds")
    array = np.frombuffer(mapped, dtype=kind, count=count, offset=at).reshape(shape)
    if zlib.crc32(_bytes(array)) != crc:
        raise Invalid(f"section {name}: checksum")
    return array


def _matrix(reading: Reading, keys: npt.NDArray[np.int64], matrix: Matrix) -> Matrix:
    """The vectors of the cache's rows, read from the file in key order, each row's
    bytes copied straight into ``matrix`` (no array per row: at 100k x 384 this took
    0.14 s of CPU where joining each batch's bytes first took 0.18-0.5 s).

    ``matrix``: not np.zeros: its calloc'd pages fault in one by one (0.55 s at 100k
    x 384 here, 0.04 s for numpy's own allocation, which asks for huge pages)."""
    dimension = matrix.shape[1]
    view, width = _bytes(matrix), dimension * 4
    at, end, found = 0, len(view), []
    for key, vector in reading.vectors(int(keys[-1]) if len(keys) else 0):
        if at == end:
            raise Invalid("the file holds rows the cache lacks")
        if len(vector) != width:
            raise Invalid(f"the file's vectors are not of dimension {dimension}")
        view[at : at + width] = vector
        at += width
        found.append(key)
    read = np.array(found, dtype=np.int64)
    if len(read) == len(keys) and np.array_equal(read, keys):
        return matrix
    return _spread(matrix, keys, read)


def _spread(matrix: Matrix, keys: npt.NDArray[np.int64], read: npt.NDArray[np.int64]) -> Matrix:
    """The rows read (``read``: their keys, in the matrix's first rows) moved to their
    keys' positions. A row the file no longer holds (garbage-collected after the
    save) keeps a zero vector: the follow that comes next marks it retired at a
    version below every tenant's floor (``Mirror._vanished``), so no search sees it."""
    positions = np.minimum(np.searchsorted(keys, read), max(len(keys) - 1, 0))
    if len(read) and np.any(keys[positions] != read):
        raise Invalid("the file holds rows the cache lacks")
    rows = matrix[: len(read)].copy()
    matrix[:] = 0.0
    matrix[positions] = rows
    return matrix


def _samples(rows: int) -> npt.NDArray[np.int64]:
    """The positions compared with the file on load (the first and the last among them)."""
    return np.unique(np.linspace(0, rows - 1, _SAMPLED_ROWS).astype(np.int64))


def _sampled_vectors(matrix: Matrix | None, rows: int) -> list[int] | None:
    """CRC-32 of the sampled rows' vectors (None: the mirror held none)."""
    if matrix is None:
        return None
    return [zlib.crc32(matrix[position].tobytes()) for position in _samples(rows)] if rows else []


def _checksums(header: dict[str, Any], mapped: mmap.mmap, rows: int) -> list[int] | None:
    """The sampled rows' vector checksums a cache was saved with.

    A format-2 cache holds the whole matrix instead: the sampled rows are read from
    its section (only they; a torn section then fails the comparison, no more).
    """
    if "vectors" in header:
        checksums = header["vectors"]
        if checksums is not None and len(checksums) != (len(_samples(rows)) if rows else 0):
            raise Invalid("vector checksums")
        return None if checksums is None else [int(crc) for crc in checksums]
    if "matrix" not in header["sections"]:
        return None
    at, dtype, shape, _crc = header["sections"]["matrix"]
    if np.dtype(dtype) != np.dtype("<f4") or len(shape) != 2 or shape[0] != rows:
        raise Invalid("section matrix: shape")
    if at % _ALIGN or at < 0 or at + rows * shape[1] * 4 > len(mapped):
        raise Invalid("section matrix out of bounds")
    matrix = np.frombuffer(mapped, dtype="<f4", count=rows * shape[1], offset=at)
    return _sampled_vectors(matrix.reshape(rows, shape[1]), rows)


def _postings(header: dict[str, Any], arrays: dict[str, Any], rows: int) -> FrozenPostings:
    terms = [str(term) for term in header["terms"]]
    offsets, positions = arrays["offsets"], arrays["positions"]
    if len(offsets) != len(terms) + 1 or len(arrays["largest"]) != len(terms):
        raise Invalid("postings: terms and offsets disagree")
    if len(arrays["shortest"]) != len(terms) or len(arrays["weights"]) != len(positions):
        raise Invalid("postings: arrays of different lengths")
    if offsets[0] != 0 or offsets[-1] != len(positions) or np.any(np.diff(offsets) <= 0):
        raise Invalid("postings: offsets")
    if len(positions) and (positions.min() < 0 or positions.max() >= rows):
        raise Invalid("postings: positions past the rows")
    return FrozenPostings(
        terms, offsets, positions, arrays["weights"], arrays["largest"], arrays["shortest"]
    )


def _check(frozen: Frozen, reading: Reading, checksums: list[int] | None) -> None:
    """The cache and the file agree where they overlap (cheap checks, no full scan)."""
    if frozen.size and np.any(np.diff(frozen.keys) <= 0):
        raise Invalid("keys out of order")
    if frozen.size and (frozen.tenants.min() < 0 or frozen.tenants.max() >= len(frozen.names)):
        raise Invalid("tenant codes")
    if not frozen.size:
        return
    key = int(frozen.keys[-1])
    found = reading.rows(key - 1, 1, False)
    if not found or int(found[0][0]) != key:
        raise Invalid(f"the file no longer holds row {key}")
    # A copy of the index that took other writes since (a restored backup, a copied
    # folder) has this identity and may reach the same version with the same newest
    # row: rows spread over the cache must match too, their vectors (read from the
    # file) included (issue 34, cache campaign). A sampled row the file no longer
    # holds was collected since and is replayed.
    positions = _samples(frozen.size)
    for at, position in enumerate(positions):
        key = int(frozen.keys[position])
        found = reading.rows(key - 1, 1, False)
        if found and int(found[0][0]) == key:
            checksum = None if checksums is None else checksums[at]
            _compare_row(frozen, int(position), found[0], checksum)


def _agrees(matrix: Matrix, keys: npt.NDArray[np.int64], reading: Reading) -> bool:
    """The shared file's sampled rows hold the file's vectors, byte for byte (a row the
    file no longer holds is zero in both: it was collected since)."""
    for position in _samples(len(keys)):
        key = int(keys[position])
        found = reading.rows(key - 1, 1, True)
        if found and int(found[0][0]) == key and bytes(found[0][7]) != matrix[position].tobytes():
            return False
    return True


def _compare_row(frozen: Frozen, position: int, row: Any, checksum: int | None) -> None:
    tenant = frozen.names[int(frozen.tenants[position])]
    ours = [int(frozen.keys[position]), int(frozen.added[position]), tenant]
    if [int(row[0]), int(row[2]), str(row[1])] != ours:
        raise Invalid(f"row {int(row[0])} differs from the file's")
    vectors = frozen.matrix
    if vectors is not None and checksum is not None and zlib.crc32(vectors[position]) != checksum:
        raise Invalid(f"row {int(row[0])}'s vector differs from the file's")


def _remove_orphans(path: Path) -> None:
    """Temporary files of saves a crash cut short (their process is gone)."""
    for orphan in path.parent.glob(f"{path.name}.*.tmp"):
        pid = orphan.name[len(path.name) + 1 :].split(".")[0]
        if pid.isdigit() and pid != str(os.getpid()) and not _alive(int(pid)):
            orphan.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True
