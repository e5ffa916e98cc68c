"""Row-level helpers of the PostgreSQL store's commits: COPY batches, counters, keys."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Pending", "add_counts", "copy_rows", "draw_keys"]


@dataclass(slots=True)
class Pending:
    """Rows of one commit, written with one COPY per table."""

    keys: Iterator[int] = field(default_factory=lambda: iter(()))
    documents: list[tuple[object, ...]] = field(default_factory=list)
    chunks: list[tuple[object, ...]] = field(default_factory=list)
    postings: list[tuple[object, ...]] = field(default_factory=list)
    tokens: int = 0


def add_counts(connection: Any, table: str, column: str, tenant: str, deltas: Counter[str]) -> None:
    """Add per-tenant frequency deltas in one statement; counts that reach 0 are dropped."""
    changed = {name: delta for name, delta in deltas.items() if delta}
    if not changed:
        return
    connection.execute(
        f"INSERT INTO {table} (tenant, {column}, df)"
        f" SELECT %s, name, delta FROM unnest(%s::text[], %s::bigint[]) AS d(name, delta)"
        f" ON CONFLICT (tenant, {column}) DO UPDATE SET df = {table}.df + excluded.df",
        (tenant, list(changed), list(changed.values())),
    )
    if any(delta < 0 for delta in changed.values()):
        connection.execute(f"DELETE FROM {table} WHERE tenant = %s AND df <= 0", (tenant,))


def draw_keys(connection: Any, sequence: str, count: int) -> list[int]:
    if count == 0:
        return []
    rows = connection.execute(
        "SELECT nextval(%s::regclass) FROM generate_series(1, %s)", (sequence, count)
    )
    return [int(row[0]) for row in rows]


def copy_rows(connection: Any, table: str, rows: Sequence[Sequence[object]]) -> None:
    if not rows:
        return
    with connection.cursor().copy(f"COPY {table} FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)
