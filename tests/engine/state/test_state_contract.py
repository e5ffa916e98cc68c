"""The state-store contract, run against both implementations: embedded files and PostgreSQL."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from rcpkit.engine.state.base import EngineState
from rcpkit.engine.state.embedded import embedded_state
from rcpkit.protocol import messages as m

StateFactory = Callable[[int], EngineState]  # ttl_seconds -> a state on one shared backend


@pytest.fixture(params=["embedded", "postgres"])
def open_state(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StateFactory]:
    opened: list[EngineState] = []
    closers: list[Callable[[], None]] = []
    if request.param == "embedded":

        def factory(ttl: int) -> EngineState:
            opened.append(embedded_state(tmp_path / f"state{len(opened)}", 2, ttl))
            return opened[-1]

    else:
        url = request.getfixturevalue("postgres_url")
        from rcpkit.engine.state.postgres import postgres_state
        from rcpkit.engine.store.postgres import PostgresStore

        def factory(ttl: int) -> EngineState:
            store = PostgresStore(url)
            closers.append(store.close)
            opened.append(postgres_state(store, 2, ttl))
            return opened[-1]

    yield factory
    for state in opened:
        state.close()
    for close in closers:
        close()


def report(hit: str, session: str | None, **flags: bool) -> m.FeedbackParams:
    return m.FeedbackParams([m.FeedbackSignal(hit, **flags)], session_id=session, query="q")


def test_feedback_is_counted_per_tenant(open_state: StateFactory) -> None:
    feedback = open_state(60).feedback
    assert feedback.record(report("a#0", "s", used=True, cited=False), "acme") == 1
    assert feedback.record(report("a#1", None, helpful=True), None) == 1
    assert (feedback.count("acme"), feedback.count(None), feedback.count("globex")) == (1, 1, 0)


def test_quarantine_needs_distinct_sessions_of_one_tenant(open_state: StateFactory) -> None:
    feedback = open_state(60).feedback
    for session in ("s1", "s1", None, None):
        feedback.record(report("doc#2", session, poison_suspected=True), "acme")
    feedback.record(report("doc#3", "s2", injection_suspected=True), "globex")
    feedback.record(report("doc#4", "s2", used=True), "acme")
    assert feedback.quarantined("acme") == frozenset()
    feedback.record(report("doc#p1", "s2", injection_suspected=True), "acme")
    assert feedback.quarantined("acme") == {"doc"}
    assert feedback.quarantined("globex") == frozenset()  # reports never cross tenants
    assert feedback.quarantined(None) == frozenset()


def test_memories_are_kept_by_id_and_tenant(open_state: StateFactory) -> None:
    memory = open_state(60).memory
    memory.save("mem-1", "acme", "global", None, json.dumps({"n": 1}))
    memory.save("mem-2", "acme", "session", "s", json.dumps({"n": 2}))
    assert memory.load("mem-2", "acme") == json.dumps({"n": 2})
    assert memory.load("mem-1", "globex") is None  # another tenant's id is unknown
    assert memory.load(None, "acme") == json.dumps({"n": 1})  # the latest *global* memory
    memory.save("mem-3", "acme", "global", None, json.dumps({"n": 3}))
    assert json.loads(memory.load(None, "acme") or "") == {"n": 3}
    memory.save("mem-1", "acme", "global", None, json.dumps({"n": 4}))  # rebuilt: replaced
    assert json.loads(memory.load(None, "acme") or "") == {"n": 4}
    assert memory.load(None, None) is None


def test_trajectories_accumulate_per_tenant_and_session(open_state: StateFactory) -> None:
    trajectories = open_state(60).trajectories
    trajectories.record("acme", "s", ["a#0", "b#0"])
    trajectories.record("acme", "s", ["b#0", "c#1"])
    assert trajectories.seen("acme", "s") == {"a#0", "b#0", "c#1"}
    assert trajectories.seen("globex", "s") == frozenset()
    assert trajectories.seen(None, "s") == frozenset()
    assert trajectories.seen("acme", "other") == frozenset()


def test_trajectory_state_round_trips_and_stays_beside_what_was_seen(
    open_state: StateFactory,
) -> None:
    trajectories = open_state(60).trajectories
    assert trajectories.state("acme", "s") == {}
    trajectories.record("acme", "s", ["a#0"])
    trajectories.save_state("acme", "s", {"drift": ("e1", "e2"), "followups": {"why?"}})
    state = trajectories.state("acme", "s")
    assert list(state["drift"]) == ["e1", "e2"]  # type: ignore[call-overload]
    assert set(state["followups"]) == {"why?"}  # type: ignore[call-overload]
    assert trajectories.seen("acme", "s") == {"a#0"}
    assert trajectories.state("globex", "s") == {}


def test_expired_trajectories_read_empty_and_restart(open_state: StateFactory) -> None:
    trajectories = open_state(0).trajectories  # every trajectory expires at once
    trajectories.record("acme", "s", ["a#0"])
    trajectories.save_state("acme", "s", {"drift": ["e1"]})
    assert trajectories.seen("acme", "s") == frozenset()
    assert trajectories.state("acme", "s") == {}
    trajectories.record("acme", "s", ["b#0"])
    assert trajectories.seen("acme", "s") == frozenset()


def test_two_handles_on_one_backend_see_one_state(open_state: StateFactory) -> None:
    first, second = open_state(60), open_state(60)
    first.feedback.record(report("doc#0", "s1", poison_suspected=True), "acme")
    second.feedback.record(report("doc#1", "s2", poison_suspected=True), "acme")
    first.memory.save("mem-x", "acme", "global", None, "{}")
    if "Postgres" not in type(first.feedback).__name__:
        # Embedded state is one server's own: each handle is a separate server.
        assert second.feedback.quarantined("acme") == frozenset()
        return
    first.trajectories.record("acme", "s", ["a#0"])
    second.trajectories.record("acme", "s", ["b#0"])
    assert first.feedback.quarantined("acme") == second.feedback.quarantined("acme") == {"doc"}
    assert second.memory.load("mem-x", "acme") == "{}"
    assert first.trajectories.seen("acme", "s") == {"a#0", "b#0"}
