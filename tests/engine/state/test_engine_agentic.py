"""Agentic surfaces (§7.7.3, §7.16, §7.17): session dedup, feedback quarantine, memory."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from engine_support import Calls, ids, indexed, make_engine, serving

from rcpkit.engine.engine import Engine

FACTS = [
    {
        "id": "volcano",
        "text": "Mount Etna is an active volcano in Sicily. It erupts often, "
        "sending lava flows down its slopes toward Catania.",
    },
    {
        "id": "glacier",
        "text": "The Aletsch glacier is the largest glacier in the Alps. Its ice "
        "has retreated by kilometres since the nineteenth century.",
    },
    {
        "id": "reef",
        "text": "The Great Barrier Reef is a coral reef system off Queensland. "
        "Warm water bleaches the coral and threatens the reef.",
    },
    {
        "id": "desert",
        "text": "The Atacama desert in Chile is the driest desert on Earth; some "
        "weather stations never recorded rain.",
    },
]


@pytest.fixture
async def call(engine: Engine):  # type: ignore[no-untyped-def]
    async with indexed(engine, FACTS) as calls:
        yield calls


async def test_a_session_never_returns_the_same_hit_twice(call: Calls) -> None:
    query = {"query": "volcano glacier reef desert", "k": 1, "sessionId": "trip"}
    seen = [ids(await call.result("retrieve", query)) for _ in range(3)]
    flat = [hit for hits in seen for hit in hits]
    assert len(flat) == 3
    assert len(set(flat)) == 3
    other = await call.result("retrieve", {**query, "sessionId": "another"})
    assert ids(other) == seen[0]  # sessions are independent
    plain = await call.result("retrieve", {k: v for k, v in query.items() if k != "sessionId"})
    assert ids(plain) == seen[0]


async def test_session_state_expires(tmp_path: Path) -> None:
    engine = make_engine(tmp_path / "ttl", session_ttl_seconds=0)
    async with serving(engine) as peer:
        call = Calls(peer)
        await call.result("index/add", {"documents": FACTS})
        query = {"query": "volcano", "k": 1, "sessionId": "s"}
        first = ids(await call.result("retrieve", query))
        await asyncio.sleep(0.01)
        assert ids(await call.result("retrieve", query)) == first


async def test_feedback_is_counted_and_quarantines_after_distinct_sessions(call: Calls) -> None:
    report = {"signals": [{"hitId": "reef#0", "poisonSuspected": True}], "query": "reef"}
    query = {"query": "coral reef", "k": 4}
    assert ids(await call.result("retrieve", query))[0] == "reef#0"
    for session in ("s1", "s1", "s2"):
        accepted = await call.result("feedback", {**report, "sessionId": session})
        assert accepted == {"accepted": 1}
    assert "reef#0" in ids(await call.result("retrieve", query))  # 2 distinct sessions < 3
    await call.result("feedback", {"signals": [{"hitId": "reef#0", "used": True}] * 2})
    await call.result("feedback", {**report, "sessionId": "s3"})
    withheld = await call.result("retrieve", query)
    assert "reef#0" not in ids(withheld)
    assert any("quarantined" in note for note in withheld["usage"]["notes"])


async def test_anonymous_reports_never_quarantine(call: Calls) -> None:
    for _ in range(5):
        await call.result(
            "feedback", {"signals": [{"hitId": "desert#0", "injectionSuspected": True}]}
        )
    assert "desert#0" in ids(await call.result("retrieve", {"query": "Atacama desert"}))


async def test_feedback_with_a_bad_reward_is_invalid_params(call: Calls) -> None:
    error = await call.error("feedback", {"signals": [{"hitId": "x", "reward": 3}]})
    assert error["code"] == -32602


async def test_memory_clues_lead_retrieve_to_the_relevant_chunks(call: Calls) -> None:
    built = await call.result("memory/build", {"scope": "global"})
    assert built["memoryId"].startswith("mem-")
    assert built["tokens"] > 0
    recalled = await call.result(
        "memory/recall", {"query": "ice retreat in the Alps", "memoryId": built["memoryId"], "n": 2}
    )
    assert recalled["clues"]
    assert all(0.0 <= clue["weight"] <= 1.0 for clue in recalled["clues"])
    best = recalled["clues"][0]["query"]
    found = await call.result("retrieve", {"query": best, "k": 1})
    assert ids(found) == ["glacier#0"]
    assert recalled["hits"][0]["id"] == "glacier#0"


async def test_memory_over_inline_documents_and_unknown_ids(call: Calls) -> None:
    built = await call.result(
        "memory/build",
        {"documents": [{"text": "Quantum dots emit light whose colour depends on their size."}]},
    )
    clues = await call.result(
        "memory/recall", {"query": "colour of light", "memoryId": built["memoryId"]}
    )
    assert clues["clues"]
    missing = await call.error("memory/recall", {"query": "x", "memoryId": "mem-nope"})
    update = await call.error("memory/build", {"memoryId": "mem-nope"})
    assert missing["code"] == update["code"] == -32015


async def test_the_corpus_vocabulary_follows_writes(engine: Engine) -> None:
    async with serving(engine) as peer:
        call = Calls(peer)
        await call.result("index/add", {"documents": [{"id": "a", "text": "zebra crossing"}]})
        assert engine.store.document_frequency("zebra") == 1
        await call.result("index/add", {"documents": [{"id": "a", "text": "lion crossing"}]})
        assert engine.store.document_frequency("zebra") == 0
        await call.result("index/delete", {"ids": ["a"]})
        assert engine.store.document_frequency("crossing") == 0


async def test_tenants_see_only_their_own_documents_ids_and_cursors(engine: Engine) -> None:
    async with (
        serving(engine, tenant="acme") as acme_peer,
        serving(engine, tenant="globex") as globex_peer,
    ):
        acme, globex = Calls(acme_peer), Calls(globex_peer)
        await acme.result(
            "index/add",
            {
                "documents": [
                    {"id": "plan", "text": "acme secret plan"},
                    {"id": "memo", "text": "acme memo plan"},
                ]
            },
        )
        await globex.result("index/add", {"documents": [{"id": "plan", "text": "globex plan"}]})
        mine = await acme.result("retrieve", {"query": "secret plan", "k": 1})
        theirs = await globex.result("retrieve", {"query": "acme secret plan", "k": 5})
        deleted = await globex.result("index/delete", {"ids": ["memo"]})
        cursor = mine["nextCursor"]
        stolen = await globex.error("retrieve", {"query": "secret plan", "k": 1, "cursor": cursor})
    assert mine["hits"][0]["text"] == "acme secret plan"
    assert [hit["text"] for hit in theirs["hits"]] == ["globex plan"]  # same id, own document
    assert deleted["deleted"] == 0  # another tenant's id is simply absent
    assert stolen["code"] == -32602
