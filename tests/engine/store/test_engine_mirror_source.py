"""The mirror behind both stores follows its source even when a follow is cut short."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from rcpkit.engine.index import _mirror
from rcpkit.engine.index._mirror import Mirror, Reading
from rcpkit.engine.index._postings import top_k


class _Rows:
    """Chunks committed at versions; ``rows`` fails once past the key ``fail_at``."""

    def __init__(self) -> None:
        self.chunks: list[tuple[Any, ...]] = []
        self.version = 0
        self.fail_at: int | None = None

    def commit(self, rows: int) -> None:
        self.version += 1
        first = len(self.chunks) + 1
        self.chunks += [
            (key, "", self.version, 0, "{}", "", f"word{key % 3} common", None)
            for key in range(first, first + rows)
        ]

    def marks(self) -> tuple[int, int]:
        return self.version, 0

    @contextmanager
    def reading(self) -> Iterator[Reading]:
        yield self  # type: ignore[misc]

    def count(self) -> int:
        return len(self.chunks)

    def rows(self, after: int, limit: int, vectors: bool) -> list[tuple[Any, ...]]:
        batch = [row for row in self.chunks if row[0] > after][:limit]
        if self.fail_at is not None and batch and batch[0][0] > self.fail_at:
            self.fail_at = None
            raise ConnectionError("lost mid-follow")
        return batch

    def retired(self, since: int, last: int) -> list[tuple[int, int]]:
        return []


def test_a_follow_cut_short_leaves_no_partial_rows_behind(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_mirror, "_BATCH", 4)
    source = _Rows()
    source.commit(2)
    mirror = Mirror(source)
    assert mirror.sync().size == 2
    source.commit(10)
    source.fail_at = 6  # the follow's second batch fails, after rows 3-6 were appended
    with pytest.raises(ConnectionError):
        mirror.sync()
    snapshot = mirror.sync()
    assert snapshot.keys.tolist() == list(range(1, 13))
    hits = top_k(snapshot.postings, {"word1": 1.0}, 20, snapshot.view(None, None))
    assert sorted(key for key, _ in hits) == [1, 4, 7, 10]
