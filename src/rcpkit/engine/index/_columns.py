"""Filter columns of the embedded store: a §8 filter becomes a boolean mask over row positions.

Each filterable field is a column of small integer codes, one per row, into the
field's distinct stored values (``-1``: the row lacks the field). A clause is
evaluated once per *distinct value* with :func:`rcpkit.engine.filters.matches`
(the oracle the SQL compilers are tested against), so its meaning is exactly
the other backends'; the per-row work is one gather of a lookup table. No JSON
is parsed and no vector is read when a query is filtered.

Values are told apart by type as well as by value: ``True``, ``1`` and ``1.0``
are equal (and hash alike) in Python, but a ``bool`` field must not match the
number 1 (§8).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from typing import assert_never

import numpy as np
import numpy.typing as npt

from rcpkit.engine.filters import And, Clause, Filter, Not, Or, matches
from rcpkit.engine.index._growable import Growable

__all__ = ["FilterColumns", "Mask"]

Mask = npt.NDArray[np.bool_]
_ABSENT = -1


def _identity(value: object) -> object:
    """A hashable identity that keeps ``True``, ``1`` and ``1.0`` apart."""
    if isinstance(value, list | tuple):
        return ("list", tuple(_identity(item) for item in value))
    if isinstance(value, dict):  # never filterable, but a careless writer may store one
        return ("dict", json.dumps(value, sort_keys=True, default=repr))
    return (type(value).__name__, value)


class _Column:
    def __init__(self, rows: int) -> None:
        self.codes = Growable(np.int32)
        self.codes.extend(np.full(rows, _ABSENT, dtype=np.int32))
        self.values: list[object] = []
        self._index: dict[object, int] = {}
        self._tables: dict[Clause, npt.NDArray[np.bool_]] = {}

    def code(self, value: object) -> int:
        identity = _identity(value)
        found = self._index.get(identity)
        if found is None:
            found = self._index[identity] = len(self.values)
            self.values.append(value)
        return found

    def table(self, clause: Clause) -> npt.NDArray[np.bool_]:
        """Whether each distinct value passes ``clause``; the last entry is for absent rows."""
        cached = self._tables.get(clause)
        count = len(self.values)
        if cached is not None and len(cached) == count + 1:
            return cached
        known = 0 if cached is None else len(cached) - 1
        fresh = [matches(clause, {clause.field: value}) for value in self.values[known:count]]
        head = cached[:-1] if cached is not None else np.zeros(0, dtype=np.bool_)
        absent = matches(clause, {})
        table = np.concatenate([head, np.array(fresh, dtype=np.bool_), [absent]])
        if len(self._tables) > 256:
            self._tables.clear()
        self._tables[clause] = table
        return table


class FilterColumns:
    """Per-field code columns for the rows of the embedded store, appended in row order."""

    def __init__(self) -> None:
        self._columns: dict[str, _Column] = {}
        self._rows = 0
        self._lock = threading.Lock()

    def extend(self, metas: Sequence[Mapping[str, object]]) -> None:
        """Append one row per normalised metadata mapping (the writer's side)."""
        with self._lock:
            start, count = self._rows, len(metas)
            for name in {name for meta in metas for name in meta}:
                if name not in self._columns:
                    self._columns[name] = _Column(start)
            codes = {name: np.full(count, _ABSENT, dtype=np.int32) for name in self._columns}
            for row, meta in enumerate(metas):
                for name, value in meta.items():
                    if value is not None:
                        codes[name][row] = self._columns[name].code(value)
            for name, column in self._columns.items():
                column.codes.extend(codes[name])
            self._rows = start + count

    def freeze(self, size: int) -> dict[str, tuple[npt.NDArray[np.int32], list[object]]]:
        """Per field its codes for rows ``[0, size)`` and its distinct values (for a cache)."""
        with self._lock:
            return {
                name: (column.codes.view()[:size], list(column.values))
                for name, column in self._columns.items()
            }

    @classmethod
    def thaw(
        cls, rows: int, frozen: Mapping[str, tuple[npt.NDArray[np.int32], Sequence[object]]]
    ) -> FilterColumns:
        """Columns of ``rows`` rows from :meth:`freeze`'s output (codes are checked)."""
        columns = cls()
        for name, (codes, values) in frozen.items():
            outside = len(codes) and (codes.min() < _ABSENT or codes.max() >= len(values))
            if len(codes) != rows or outside:
                raise ValueError(f"the codes of column {name!r} do not fit its values")
            column = _Column(0)
            column.codes = Growable.adopt(codes)
            for value in values:
                column.code(value)
            if len(column.values) != len(values):
                raise ValueError(f"column {name!r} repeats a value")
            columns._columns[name] = column
        columns._rows = rows
        return columns

    def mask(self, filter: Filter, size: int) -> Mask:
        """Rows ``[0, size)`` that pass ``filter`` (§8 semantics, as :func:`matches`)."""
        match filter:
            case Clause():
                column = self._columns.get(filter.field)
                if column is None:
                    return np.full(size, matches(filter, {}), dtype=np.bool_)
                table = column.table(filter)
                codes = column.codes.view()[:size]
                passed: Mask = table[codes]  # code -1 reads the last entry: absent
                return passed
            case And(children):
                return _reduce(np.logical_and, [self.mask(c, size) for c in children])
            case Or(children):
                return _reduce(np.logical_or, [self.mask(c, size) for c in children])
            case Not(child):
                return ~self.mask(child, size)
            case _:
                assert_never(filter)


def _reduce(combine: np.ufunc, masks: list[Mask]) -> Mask:
    out = masks[0].copy()
    for other in masks[1:]:
        combine(out, other, out=out)
    return out
