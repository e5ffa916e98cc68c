"""Exact dense search through int8 codes: a quarter of the bytes, then float rescoring.

The float product reads 1.5 GB per query at 1M x 384 rows and is bound by memory
bandwidth; the int8 codes of the same rows are 384 MB. Each row ``m`` is held as
codes ``c`` (int8, one scale per dimension ``s``: ``m ~ s * c``) with its
quantization error ``e = |m - s * c|``; the query, scaled by ``s``, is quantized to
int8 too (``s * q = b * q8 + d``). The estimate ``b * (c . q8)`` is one integer
product (onnxruntime's ``MatMulInteger``, its u8 x s8 kernel) of the query, as one
row, with the codes held transposed (dimension x rows, in blocks of rows): with the
codes as rows and the query as one column the same kernel was no faster than the
float BLAS (113 ms at 1M x 384 on an AVX-512 VNNI EPYC, where float took 123 ms);
transposed it took 15 ms (issue 31 item 2). The query goes in as ``q8 + offset``
(u8) and ``offset * sum(c)`` per row comes off, so the estimate is ``c . q8``
exactly; it is within ``|q| * e + |c| * |d|`` of the float cosine (Cauchy-Schwarz on
the two residuals). So the search is exact, not "recall 1.0 in practice": the rows
with the best estimates are rescored in float, and every row whose estimate plus
that bound reaches the k-th rescored cosine is rescored too. A row left out scores
strictly below the k-th cosine, so the top k is the float top k (§8: recall 1.0),
ties included.

The codes mirror the index's rows as a prefix the writer keeps whole: built on a
background thread once the index is large enough (a search takes the float path
until then), extended under the writer lock as rows are appended, re-fitted when
the index has doubled since the scales were chosen (a later row past a scale is
clipped, which only widens its own bound). Nothing is saved: a reopened index
quantizes its loaded matrix again off the request path (about 5 s at 1M rows).

Without onnxruntime (the ``models`` extra), or where its kernel is not exact,
nothing is built and the float path answers: numpy's own integer product is
slower than the float BLAS one (measured: 168 ms for 200k rows against 103 ms
for 1M in float).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt

from rcpkit.engine.index._growable import Growable

__all__ = ["QuantizedRows", "QuantizedView", "candidates", "integer_kernel"]

_log = logging.getLogger(__name__)
Matrix = npt.NDArray[np.float32]
Vector = npt.NDArray[np.float32]
Positions = npt.NDArray[np.int64]
Mask = npt.NDArray[np.bool_]
Rows = Callable[[], Matrix]

_BLOCK = 32_768  # rows quantized at a time: bounded temporaries at any size
_REFIT_GROWTH = 2.0  # choose the scales again once the index holds this many times the rows
_SLACK = 1e-4  # added to the bound: float32 rounding of the cosines it is compared with
_COLUMNS = 262_144  # rows per transposed block of a build (one kernel call each)
_GROWTH = 4  # a block for appended rows holds a quarter of the rows held (4096 to 65536)


@dataclass(frozen=True, slots=True)
class QuantizedView:
    """The codes of the first ``rows`` rows of an index (never written after publishing)."""

    blocks: tuple[npt.NDArray[np.int8], ...]  # (dimension, capacity) each, rows in order
    rows: int
    sums: npt.NDArray[np.int32]  # per row: sum(c), for the query's u8 offset
    scale: Vector  # per dimension
    errors: Vector  # per row: |m - s * c|
    norms: Vector  # per row: |c|
    error_max: float
    norm_max: float
    pool: int  # rows rescored per result wanted (at least 64)


class CodeColumns:
    """Codes held transposed, in blocks of rows; appended in place past every published view.

    A view is ``(blocks, rows)``: a reader reads the columns below ``rows`` only, and
    the writer only writes columns at or past them, so a view never changes.
    """

    def __init__(self, dimension: int) -> None:
        self._dimension = dimension
        self._blocks: list[npt.NDArray[np.int8]] = []
        self._rows = 0
        self._room = 0  # free columns in the last block

    def __len__(self) -> int:
        return self._rows

    def extend(self, codes: npt.NDArray[np.int8]) -> None:
        """Append rows (``codes``: rows x dimension)."""
        done = 0
        while done < len(codes):
            if self._room == 0:
                capacity = len(codes) - done if not self._blocks else self._append_size()
                self._blocks.append(np.zeros((self._dimension, capacity), dtype=np.int8))
                self._room = capacity
            block = self._blocks[-1]
            at = block.shape[1] - self._room
            take = min(self._room, len(codes) - done)
            block[:, at : at + take] = codes[done : done + take].T
            self._room -= take
            self._rows += take
            done += take

    def _append_size(self) -> int:
        return int(min(65_536, max(4_096, self._rows // _GROWTH)))

    def view(self) -> tuple[tuple[npt.NDArray[np.int8], ...], int]:
        return tuple(self._blocks), self._rows


# --- the integer kernel ------------------------------------------------------------


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _field(number: int, payload: bytes | str | int) -> bytes:
    """One protobuf field: a varint for an int, length-delimited otherwise."""
    if isinstance(payload, int):
        return _varint(number << 3) + _varint(payload)
    data = payload.encode() if isinstance(payload, str) else payload
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def _tensor(name: str, element_type: int, dims: tuple[str, str]) -> bytes:
    shape = b"".join(_field(1, _field(2, dim)) for dim in dims)  # Dimension.dim_param
    tensor_type = _field(1, element_type) + _field(2, shape)
    return _field(1, name) + _field(2, _field(1, tensor_type))  # ValueInfoProto


def matmul_integer_model() -> bytes:
    """An ONNX model of one ``MatMulInteger``: A uint8 (1, dim) x B int8 (dim, rows) -> int32.

    Written as protobuf by hand: the ``onnx`` package is a development dependency only.
    """
    uint8, int8, int32 = 2, 3, 6  # TensorProto.DataType
    node = _field(1, "A") + _field(1, "B") + _field(2, "Y") + _field(4, "MatMulInteger")
    graph = (
        _field(1, node)
        + _field(2, "rcpkit-int8-scores")
        + _field(11, _tensor("A", uint8, ("queries", "dimension")))
        + _field(11, _tensor("B", int8, ("dimension", "rows")))
        + _field(12, _tensor("Y", int32, ("queries", "rows")))
    )
    opset = _field(1, "") + _field(2, 13)
    return _field(1, 8) + _field(7, graph) + _field(8, opset)  # ir_version 8


class IntegerKernel:
    """``c . q8`` of every row, in int64, through onnxruntime on one thread (as the BLAS)."""

    def __init__(self, session: Any, query_range: int) -> None:
        self._session = session
        self.query_range = query_range  # the query's codes lie in [-range, range]
        self._offset = query_range + 1  # q8 + offset is u8, within the kernel's exact range

    def scores(
        self,
        blocks: Sequence[npt.NDArray[np.int8]],
        rows: int,
        sums: npt.NDArray[np.int32],
        query: npt.NDArray[np.int8],
    ) -> npt.NDArray[np.int64]:
        shifted = (query.astype(np.int16) + self._offset).astype(np.uint8).reshape(1, -1)
        parts = [self._session.run(None, {"A": shifted, "B": block})[0][0] for block in blocks]
        out = np.concatenate(parts)[:rows].astype(np.int64) if parts else np.zeros(0, np.int64)
        out -= self._offset * sums[:rows].astype(np.int64)
        return out


@cache
def integer_kernel() -> IntegerKernel | None:
    """The kernel, or None without onnxruntime or when it does not compute exactly."""
    try:
        import onnxruntime  # type: ignore[import-untyped]

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = options.inter_op_num_threads = 1
        session = onnxruntime.InferenceSession(
            matmul_integer_model(), options, providers=["CPUExecutionProvider"]
        )
    except Exception:  # not installed, or a build without the operator
        _log.info("no onnxruntime MatMulInteger: dense search stays float", exc_info=True)
        return None
    # Without VNNI, x86 kernels add u8 x s8 pairs in saturating int16 (255 * 127 * 2 > 32767):
    # probe with extreme codes, and keep the query in 7 bits where that happens.
    for query_range in (127, 63):
        kernel = IntegerKernel(session, query_range)
        if _exact_on_extremes(kernel):
            return kernel
    _log.warning("onnxruntime's MatMulInteger is not exact here: dense search stays float")
    return None


def _exact_on_extremes(kernel: IntegerKernel) -> bool:
    rng = np.random.default_rng(0)
    limit = kernel.query_range
    codes = np.vstack(
        [
            np.full((2, 64), 127, np.int8),
            np.full((2, 64), -127, np.int8),
            rng.integers(-127, 128, (60, 64), dtype=np.int8),
        ]
    )
    sums = codes.astype(np.int64).sum(axis=1).astype(np.int32)
    blocks = [np.ascontiguousarray(codes.T)]
    query = np.concatenate([np.full(32, limit), rng.integers(-limit, limit + 1, 32)])
    query = query.astype(np.int8)
    want = codes.astype(np.int64) @ query.astype(np.int64)
    for sign in (1, -1):
        got = kernel.scores(blocks, len(codes), sums, (sign * query).astype(np.int8))
        if not np.array_equal(got, sign * want):
            return False
    return True


# --- quantizing rows -----------------------------------------------------------------


def fit_scale(matrix: Matrix) -> Vector:
    """One scale per dimension: its largest magnitude maps to code 127."""
    top = np.zeros(matrix.shape[1], dtype=np.float32)
    for first in range(0, len(matrix), _BLOCK):
        np.maximum(top, np.abs(matrix[first : first + _BLOCK]).max(axis=0), out=top)
    scale: Vector = (np.maximum(top, np.float32(1e-12)) / np.float32(127)).astype(np.float32)
    return scale


Quantized = tuple[npt.NDArray[np.int8], npt.NDArray[np.int32], Vector, Vector]


def quantize(rows: Matrix, scale: Vector) -> Quantized:
    """(codes, per-row code sum, per-row error, per-row code norm) of ``rows`` under ``scale``."""
    count = len(rows)
    codes = np.empty(rows.shape, dtype=np.int8)
    sums = np.empty(count, dtype=np.int32)
    errors = np.empty(count, dtype=np.float32)
    norms = np.empty(count, dtype=np.float32)
    for first in range(0, count, _BLOCK):
        block = np.asarray(rows[first : first + _BLOCK], dtype=np.float32)
        level = np.divide(block, scale)
        np.rint(level, out=level)
        np.clip(level, -127, 127, out=level)
        end = first + len(block)
        norms[first:end] = np.sqrt(np.einsum("ij,ij->i", level, level))
        codes[first:end] = level.astype(np.int8)
        sums[first:end] = level.sum(axis=1).astype(np.int32)
        np.multiply(level, scale, out=level)
        np.subtract(block, level, out=level)
        errors[first:end] = np.sqrt(np.einsum("ij,ij->i", level, level))
    return codes, sums, errors, norms


class QuantizedRows:
    """The writer's side: the codes of a dense index's rows, kept a whole prefix of them.

    ``lock`` is the index's writer lock; ``publish`` (called under it) republishes the
    index's state, which reads :attr:`view`.
    """

    def __init__(
        self, dimension: int, pool: int, lock: threading.Lock, publish: Callable[[], None]
    ) -> None:
        self._dimension, self._pool = dimension, pool
        self._lock, self._publish = lock, publish
        self._scale: Vector | None = None
        self._fitted = 0  # rows the scale was chosen from
        self._codes = CodeColumns(dimension)
        self._sums = Growable(np.int32)
        self._errors = Growable(np.float32)
        self._norms = Growable(np.float32)
        self._error_max = self._norm_max = 0.0
        self._builder: threading.Thread | None = None
        self._closed = False
        self.view: QuantizedView | None = None

    def close(self) -> None:
        """The index was cleared: a build under way publishes nothing (call under the lock)."""
        self._closed = True
        self.view = None

    def start(self, rows: Rows, size: int) -> None:
        """Quantize on a background thread when nothing is held or the index has doubled."""
        if self._closed or (self._builder is not None and self._builder.is_alive()):
            return
        if self._scale is not None and size < _REFIT_GROWTH * self._fitted:
            return
        self._builder = threading.Thread(
            target=self._build, args=(rows,), name="rcpkit-quantize", daemon=True
        )
        self._builder.start()

    def wait(self, timeout: float) -> bool:
        """Wait (bounded) for a build under way; True once codes are held (tests, benchmarks)."""
        if self._builder is not None:
            self._builder.join(timeout)
        return self.view is not None

    def extend(self, rows: Matrix) -> None:
        """Codes for rows just appended (under the writer lock); nothing before the first build."""
        if self._scale is not None and len(rows):
            self._append(*quantize(rows, self._scale))
            self.view = self._view()

    def _build(self, rows: Rows) -> None:
        try:
            if integer_kernel() is None:
                return
            matrix = rows()  # the bulk, without the writer lock
            scale = fit_scale(matrix)
            quantized = quantize(matrix, scale)
            with self._lock:  # the rows appended meanwhile, then publish
                if self._closed:
                    return
                newer = rows()[len(matrix) :]
                self._scale, self._fitted = scale, len(matrix)
                self._codes, self._sums = CodeColumns(self._dimension), Growable(np.int32)
                self._errors, self._norms = Growable(np.float32), Growable(np.float32)
                self._error_max = self._norm_max = 0.0
                self._append(*quantized)
                self._append(*quantize(newer, scale))
                self.view = self._view()
                self._publish()
            _log.info("dense rows quantized to int8: %d rows", len(matrix) + len(newer))
        except Exception:  # the float path keeps answering
            _log.exception("quantizing the dense rows failed; dense search stays float")

    def _append(
        self,
        codes: npt.NDArray[np.int8],
        sums: npt.NDArray[np.int32],
        errors: Vector,
        norms: Vector,
    ) -> None:
        if not len(codes):
            return
        self._codes.extend(codes)
        self._sums.extend(sums)
        self._errors.extend(errors)
        self._norms.extend(norms)
        self._error_max = max(self._error_max, float(errors.max()))
        self._norm_max = max(self._norm_max, float(norms.max()))

    def _view(self) -> QuantizedView:
        assert self._scale is not None
        blocks, rows = self._codes.view()
        return QuantizedView(
            blocks,
            rows,
            self._sums.view(),
            self._scale,
            self._errors.view(),
            self._norms.view(),
            self._error_max,
            self._norm_max,
            self._pool,
        )


# --- searching -----------------------------------------------------------------------


def candidates(
    view: QuantizedView,
    matrix: Matrix,
    query: Vector,
    k: int,
    visible: Mask | None,
    count: int,
) -> tuple[Positions, npt.NDArray[np.float32]] | None:
    """Row positions holding the float top ``k`` of the visible rows, with their float cosines.

    Every visible row not returned scores strictly below the k-th cosine returned.
    None: no kernel, or a pool covering every visible row (the float path is as cheap).
    """
    kernel = integer_kernel()
    pool = max(64, view.pool * k)
    if kernel is None or count <= pool or len(matrix) != view.rows:
        return None
    scaled = (view.scale * query).astype(np.float32)
    step = float(np.abs(scaled).max()) / kernel.query_range or 1.0
    codes = np.clip(np.rint(scaled / step), -kernel.query_range, kernel.query_range)
    q8 = codes.astype(np.int8)
    residual = float(np.linalg.norm(scaled - step * codes.astype(np.float32)))
    estimates = kernel.scores(view.blocks, view.rows, view.sums, q8)  # c . q8, exactly
    if visible is not None:
        estimates[~visible] = np.iinfo(np.int64).min
    best = np.argpartition(estimates, len(estimates) - pool)[-pool:]
    cosines = matrix[best] @ query
    kth = float(np.partition(cosines, pool - k)[pool - k])
    # A row r is below the k-th cosine when step * estimate + bound < kth.
    length = float(np.linalg.norm(query))
    bound = length * view.error_max + view.norm_max * residual + _SLACK
    floor = int(np.floor((kth - bound) / step))
    reached = estimates >= max(floor, np.iinfo(np.int64).min + 1)
    if visible is not None:
        reached &= visible
    if int(np.count_nonzero(reached)) <= pool:
        return best.astype(np.int64), cosines  # every row that can reach kth is in the pool
    rows = np.flatnonzero(reached)
    # The per-row bound is tighter than the global one: rescore only the rows it keeps.
    reach = step * estimates[rows].astype(np.float64)
    reach += length * view.errors[rows] + view.norms[rows] * residual + _SLACK
    rows = rows[reach >= kth]
    return rows.astype(np.int64), matrix[rows] @ query
