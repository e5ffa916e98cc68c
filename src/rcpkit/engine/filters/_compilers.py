"""The seam for query-language backends: one compiler per dialect, looked up by name.

A compiler turns a parsed :data:`Filter` into ``(sql, params)`` over a column that
holds :func:`normalize_meta` output, with the semantics of :func:`matches`.
SQLite (``json_each`` over a JSON text column) and PostgreSQL (``jsonb`` with
a GIN index) are registered; both run through the same differential test
against the Python evaluator (``tests/engine/filters/test_filters_eval.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from rcpkit.engine.filters._postgres import compile_postgres
from rcpkit.engine.filters._sqlite import compile_sqlite
from rcpkit.protocol.filters import Filter

__all__ = ["COMPILERS", "Compiler", "compile_filter"]


class Compiler(Protocol):
    """Compiles a filter over ``column`` to a parameterised boolean SQL expression."""

    def __call__(self, filter: Filter, column: str) -> tuple[str, list[object]]: ...


COMPILERS: Mapping[str, Compiler] = {"sqlite": compile_sqlite, "postgres": compile_postgres}


def compile_filter(dialect: str, filter: Filter, column: str) -> tuple[str, list[object]]:
    """Compile with the registered compiler for ``dialect`` (KeyError if there is none)."""
    return COMPILERS[dialect](filter, column)
