"""Two stateless servers on one PostgreSQL: any of them answers any agentic request alike."""

from __future__ import annotations

from pathlib import Path

from engine_support import Calls, ids, make_engine, serving

FACTS = [
    {"id": "reef", "text": "The Great Barrier Reef is a coral reef system off Queensland."},
    {"id": "glacier", "text": "The Aletsch glacier is the largest glacier in the Alps."},
    {"id": "desert", "text": "The Atacama desert in Chile is the driest desert on Earth."},
]


async def test_feedback_memory_and_sessions_reach_every_server(
    postgres_url: str, tmp_path: Path
) -> None:
    first = make_engine(tmp_path / "one", store=postgres_url, quarantine_reports=2)
    second = make_engine(tmp_path / "two", store=postgres_url, quarantine_reports=2)
    try:
        async with serving(first, tenant="acme") as a, serving(second, tenant="acme") as b:
            one, two = Calls(a), Calls(b)
            await one.result("index/add", {"documents": FACTS})
            session = {"query": "reef glacier desert", "k": 1, "sessionId": "trip"}
            seen = [ids(await one.result("retrieve", session))]
            seen.append(ids(await two.result("retrieve", session)))  # the other server
            assert seen[0] != seen[1]  # server two knew what server one had returned
            report = {"signals": [{"hitId": "reef#0", "poisonSuspected": True}]}
            await one.result("feedback", {**report, "sessionId": "s1"})
            await two.result("feedback", {**report, "sessionId": "s2"})
            withheld = await one.result("retrieve", {"query": "coral reef", "k": 3})
            assert "reef#0" not in ids(withheld)
            built = await one.result("memory/build", {"scope": "global"})
            recalled = await two.result(
                "memory/recall", {"query": "ice in the Alps", "memoryId": built["memoryId"]}
            )
            assert recalled["clues"]
        assert not (tmp_path / "one" / "feedback.sqlite3").exists()  # nothing local
        assert not (tmp_path / "two" / "memory.sqlite3").exists()
    finally:
        first.close()
        second.close()
