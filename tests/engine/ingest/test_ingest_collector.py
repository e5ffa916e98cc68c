"""A write holds the cyclic collector off, and gives it back as it found it."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import rcpkit
from rcpkit.engine.ingest.collector import ENDS_PER_COLLECTION, collector_paused


@pytest.fixture(autouse=True)
def _collector_restored() -> Iterator[None]:
    was = gc.isenabled()
    yield
    if was:
        gc.enable()
    else:
        gc.disable()


def test_the_collector_is_off_inside_and_on_again_after() -> None:
    gc.enable()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():  # nested: the inner end does not turn it on
            pass
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_collector_its_caller_turned_off_stays_off() -> None:
    gc.disable()
    with collector_paused():
        pass
    assert not gc.isenabled()


def test_it_comes_back_when_the_last_of_two_threads_ends_whichever_ends_first() -> None:
    gc.enable()
    inside, release = threading.Event(), threading.Event()

    def writer() -> None:
        with collector_paused():
            inside.set()
            release.wait(30)

    thread = threading.Thread(target=writer)
    thread.start()
    assert inside.wait(30)
    with collector_paused():
        pass  # this one began second and ends first: the other still writes
    assert not gc.isenabled()
    release.set()
    thread.join(30)
    assert gc.isenabled()


def test_an_add_and_a_refused_add_leave_the_collector_on(tmp_path: Path) -> None:
    gc.enable()
    with rcpkit.open(tmp_path / "index", create=True, vectors=4) as index:
        index.add([{"id": "a", "text": "alpha beta"}], vectors=[[1.0, 0.0, 0.0, 0.0]])
        assert gc.isenabled()
        with pytest.raises(rcpkit.LibraryError):
            index.add([{"id": "b", "text": "   "}], vectors=[[1.0, 0.0, 0.0, 0.0]])
        assert gc.isenabled()


def test_writes_that_always_overlap_still_let_it_collect_now_and_then() -> None:
    """A busy server whose writes never all end at once: the pause is bounded."""
    gc.enable()
    collections: list[int] = []

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    gc.callbacks.append(seen)
    try:
        with collector_paused():  # a long write the others overlap
            for _ in range(3 * ENDS_PER_COLLECTION):
                with collector_paused():
                    pass
    finally:
        gc.callbacks.remove(seen)
    assert collections.count(2) >= 3  # a full collection per ENDS_PER_COLLECTION ends
