"""One retrieve reads each row from the store once, however many stages ask for it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from engine_support import indexed, make_engine

from rcpkit.engine.store.snapshot import fetch_rows, one_read

DOCUMENTS = [
    {"id": f"d{n}", "text": f"heat transfer note {n} on the boundary layer of a wing " * 6}
    for n in range(12)
]


class _Counting:
    """A store's ``fetch``, counting each key it is asked for."""

    def __init__(self, rows: dict[int, str]) -> None:
        self.rows = rows
        self.asked: Counter[int] = Counter()

    def fetch(self, keys: Sequence[int]) -> dict[int, Any]:
        self.asked.update(keys)
        return {key: self.rows[key] for key in keys if key in self.rows}


def test_inside_one_read_a_row_is_fetched_once_and_outside_every_time() -> None:
    store: Any = _Counting({1: "a", 2: "b", 3: "c"})
    with one_read(store):
        assert fetch_rows(store, [1, 2]) == {1: "a", 2: "b"}
        assert fetch_rows(store, [2, 3, 9]) == {2: "b", 3: "c"}  # 9 is no row
        assert fetch_rows(store, [3, 1]) == {3: "c", 1: "a"}
    assert store.asked == Counter({1: 1, 2: 1, 3: 1, 9: 1})
    fetch_rows(store, [1])
    assert store.asked[1] == 2


async def test_a_default_retrieve_fetches_no_row_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = make_engine(tmp_path / "index")
    async with indexed(engine, DOCUMENTS) as call:
        asked: Counter[int] = Counter()
        fetch = engine.store.fetch

        def counting(keys: Sequence[int]) -> Any:
            asked.update(keys)
            return fetch(keys)

        monkeypatch.setattr(engine.store, "fetch", counting)
        result = await call.result("retrieve", {"query": "heat transfer wing", "k": 10})
    engine.close()
    assert set(result["usage"]["stages"]) >= {"feedback", "proximity", "pack"}
    assert asked and max(asked.values()) == 1
