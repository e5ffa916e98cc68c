"""A pinned retrieve (§7.7.1) against another process's `collect`, in both stores (issue 20).

The version check (``floor <= version <= latest``) and the reads must be one
consistent read: a collect that commits between them either is invisible to
the request (it serves exactly the pinned snapshot) or the request is refused
(``-32010``); it never answers with part of the snapshot. The interleaving is
forced: the engine's first BM25 read runs the other process's collect before
it reads, i.e. after the version was checked and before any row was read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from engine_support import Calls, make_engine, serving

from rcpkit.engine.engine import Engine
from rcpkit.engine.store.base import Store
from rcpkit.engine.store.sqlite import SQLiteStore

Opened = tuple[Engine, Callable[[], Store]]


@pytest.fixture(params=["sqlite", "postgres"])
def opened(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opened]:
    """An engine, and how another process opens the same store."""
    if request.param == "postgres":
        import pg_support

        from rcpkit.engine.store.postgres import PostgresStore

        url = pg_support.fresh_database()
        engine = make_engine(tmp_path / "local", store=url)
        yield engine, lambda: PostgresStore(url)
        engine.close()
        pg_support.drop_database(url)
        return
    engine = make_engine(tmp_path / "local")
    assert isinstance(engine.store, SQLiteStore)
    path = engine.store.path
    yield engine, lambda: SQLiteStore(path)
    engine.close()


def _collect_before_the_first_read(
    engine: Engine, other: Store, monkeypatch: pytest.MonkeyPatch
) -> list[int]:
    """Make the next retrieve's first BM25 read run ``other.collect(1)`` first."""
    collected: list[int] = []
    lexical = engine.store.index.lexical

    def collect_first(*args: Any, **kwargs: Any) -> Any:
        collected.extend(other.collect(1))
        monkeypatch.setattr(engine.store.index, "lexical", lexical)
        return lexical(*args, **kwargs)

    monkeypatch.setattr(engine.store.index, "lexical", collect_first)
    return collected


async def test_a_pinned_retrieve_serves_its_whole_snapshot_while_another_process_collects(
    opened: Opened, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine, open_other = opened
    other = open_other()
    async with serving(engine) as peer:
        call = Calls(peer)
        first = [{"id": f"d{i}", "text": f"alpha lantern {i}"} for i in range(3)]
        await call.result("index/add", {"documents": first})  # version 1
        await call.result("index/add", {"documents": [{"id": "d0", "text": "gamma"}]})  # 2
        pinned = {"query": "alpha lantern", "mode": "sparse", "k": 10, "indexVersion": "1"}
        before = await call.result("retrieve", pinned)
        collected = _collect_before_the_first_read(engine, other, monkeypatch)
        during = await call.result("retrieve", pinned)
        after = await call.error("retrieve", pinned)
    other.close()
    assert collected  # the collect did run inside the request, and deleted d0's first chunk
    assert sorted(hit["id"] for hit in before["hits"]) == ["d0#0", "d1#0", "d2#0"]
    assert during["indexVersion"] == "1"
    assert during["hits"] == before["hits"]  # all of version 1, text included
    assert after["code"] == -32010  # version 1 is gone now: refused, never another one


async def test_a_pinned_retrieve_survives_a_collect_that_rebuilds_the_read_side(
    opened: Opened, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A collect that leaves most rows dead makes the in-memory read side (the mirror)
    # start again from the file without them: a reader pinned below the new floor
    # must still read the rows its snapshot holds (or be refused), not an empty index.
    engine, open_other = opened
    other = open_other()
    count = 1_100
    async with serving(engine) as peer:
        call = Calls(peer)
        documents = [{"id": f"d{i}", "text": f"alpha lantern {i}"} for i in range(count)]
        await call.result("index/add", {"documents": documents})  # version 1
        await call.result("index/delete", {"ids": [f"d{i}" for i in range(1, count)]})  # 2
        pinned = {"query": "alpha lantern", "mode": "sparse", "k": 5, "indexVersion": "1"}
        before = await call.result("retrieve", pinned)
        collected = _collect_before_the_first_read(engine, other, monkeypatch)
        during = await call.result("retrieve", pinned)
        latest = await call.result("retrieve", {"query": "alpha lantern", "mode": "sparse"})
    other.close()
    assert len(collected) == count - 1
    assert len(before["hits"]) == 5
    assert during["hits"] == before["hits"]
    assert [hit["id"] for hit in latest["hits"]] == ["d0#0"]
