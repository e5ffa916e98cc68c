"""index/add and index/delete through the RCP surface (§7.10, §7.11), on a real SQLite store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NoReturn

import pytest
from engine_support import Calls, make_engine, serving

from rcpkit.engine.engine import Engine
from rcpkit.handlers.engine import build_engine_app
from support import running, shared_path


def ids_of(result: dict) -> list[str]:
    return [hit["id"] for hit in result["hits"]]


SCHEMA = shared_path("reference", "rcp-1.0.schema.json")


async def test_ids_are_returned_positionally_and_minted_when_absent(engine: Engine) -> None:
    async with serving(engine) as peer:
        call = Calls(peer)
        added = await call.result(
            "index/add",
            {
                "documents": [
                    {"id": "b", "text": "beta"},
                    {"text": "gamma ray"},
                    {"id": "a", "text": "alpha"},
                ]
            },
        )
    assert added["ids"][0] == "b"
    assert added["ids"][2] == "a"
    assert added["ids"][1] not in ("a", "b")
    assert added["chunks"] == 3


async def test_an_upsert_replaces_the_text_and_is_retrievable_exactly_once(engine: Engine) -> None:
    async with serving(engine) as peer:
        call = Calls(peer)
        await call.result("index/add", {"documents": [{"id": "d", "text": "old walrus text"}]})
        await call.result("index/add", {"documents": [{"id": "d", "text": "new narwhal text"}]})
        await call.result("index/add", {"documents": [{"id": "d", "text": "new narwhal text"}]})
        new = await call.result("retrieve", {"query": "narwhal", "k": 10, "mode": "sparse"})
        old = await call.result("retrieve", {"query": "walrus", "k": 10, "mode": "sparse"})
        dense = await call.result("retrieve", {"query": "narwhal", "k": 10, "mode": "dense"})
    assert ids_of(new) == ["d#0"]
    assert old["hits"] == []
    assert ids_of(dense).count("d#0") == 1


async def test_delete_is_idempotent_and_counts_real_removals(engine: Engine) -> None:
    async with serving(engine) as peer:
        call = Calls(peer)
        await call.result("index/add", {"documents": [{"id": "x", "text": "xylophone"}]})
        first = await call.result("index/delete", {"ids": ["x", "missing"]})
        again = await call.result("index/delete", {"ids": ["x"]})
        gone = await call.result("retrieve", {"query": "xylophone", "mode": "hybrid"})
    assert (first["deleted"], again["deleted"]) == (1, 0)
    assert gone["hits"] == []


async def test_an_idempotency_key_returns_the_original_result(engine: Engine) -> None:
    async with serving(engine) as peer:
        call = Calls(peer)
        meta = {"_meta": {"idempotencyKey": "k-1"}}
        first = await call.result("index/add", {"documents": [{"text": "once"}], **meta})
        repeat = await call.result("index/add", {"documents": [{"text": "once"}], **meta})
        found = await call.result("retrieve", {"query": "once", "k": 10, "mode": "sparse"})
    assert repeat == first
    assert len(found["hits"]) == 1


async def test_an_idempotency_key_past_its_retention_applies_the_write_again(
    tmp_path: Path,
) -> None:
    # §7.10 keys are kept `idempotency_retention_seconds`, then collected with old versions.
    # Two copies of one text: the hits must show both (not collapsed as duplicates).
    engine = make_engine(
        tmp_path / "index", idempotency_retention_seconds=0, collapse_duplicates=False
    )
    async with serving(engine) as peer:
        call = Calls(peer)
        meta = {"_meta": {"idempotencyKey": "k-1"}}
        first = await call.result("index/add", {"documents": [{"text": "once"}], **meta})
        repeat = await call.result("index/add", {"documents": [{"text": "once"}], **meta})
        found = await call.result("retrieve", {"query": "once", "k": 10, "mode": "sparse"})
    assert repeat["ids"] != first["ids"]  # no id given: the repeat minted a second copy
    assert len(found["hits"]) == 2
    assert engine.store.remembered("k-1") is None
    engine.close()


async def test_a_key_recorded_while_the_request_ran_returns_the_original_result(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The repeat checks `remembered` before the first request (here: on another server
    # sharing the store) has committed; the commit then finds the key and writes nothing.
    async with serving(engine) as peer:
        call = Calls(peer)
        meta = {"_meta": {"idempotencyKey": "k-1"}}
        first = await call.result("index/add", {"documents": [{"text": "once"}], **meta})
        monkeypatch.setattr(engine.store, "remembered", lambda key: None)
        repeat = await call.result("index/add", {"documents": [{"text": "once"}], **meta})
        found = await call.result("retrieve", {"query": "once", "k": 10, "mode": "sparse"})
    assert repeat == first
    assert len(found["hits"]) == 1


async def test_documents_without_text_are_refused_and_change_nothing(engine: Engine) -> None:
    async with serving(engine) as peer:
        call = Calls(peer)
        error = await call.error(
            "index/add", {"documents": [{"id": "ok", "text": "fine"}, {"id": "bad", "text": "   "}]}
        )
        after = await call.result("retrieve", {"query": "fine", "mode": "sparse"})
    assert (error["code"], error["data"]["field"]) == (-32602, "documents[1].text")
    assert after["hits"] == []
    assert engine.store.version == 0


async def test_initialize_documents_the_content_body_the_schema_does_not_list(
    engine: Engine,
) -> None:
    # The schema's IndexAddParams requires `text`; rcpkit also takes `content` alone
    # (§4.8) and says so in initialize, so a client need not guess (issue 34).
    schema = json.loads(SCHEMA.read_text()) if SCHEMA.is_file() else None
    async with running(build_engine_app(engine), initialize=False) as peer:
        init = await peer.request("init", "initialize", {"protocolVersion": 1})
        call = Calls(peer)
        body = [{"type": "text", "text": "Boundary layer transition at supersonic speeds."}]
        added = await call.result("index/add", {"documents": [{"id": "c", "content": body}]})
        neither = await call.error("index/add", {"documents": [{"id": "none"}]})
        found = await call.result("retrieve", {"query": "supersonic", "mode": "sparse"})
    declared = init["result"]["_meta"]["indexDocument"]
    assert declared["body"] == ["text", "content"]
    assert set(declared["extensions"]) == {"content", "title", "uri", "modality", "vector"}
    if schema is not None:  # what the extension adds is exactly what the schema lacks
        listed = schema["$defs"]["IndexAddParams"]["properties"]["documents"]["items"]
        assert listed["required"] == ["text"]
        assert not set(declared["extensions"]) & set(listed["properties"])
    assert added["ids"] == ["c"] and [hit["chunk"]["docId"] for hit in found["hits"]] == ["c"]
    assert (neither["code"], neither["data"]["field"]) == (-32602, "documents[0].text")


async def test_a_failure_mid_batch_leaves_the_previous_version_intact(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with serving(engine) as peer:
        call = Calls(peer)
        await call.result("index/add", {"documents": [{"id": "keep", "text": "original words"}]})
        version = engine.store.version
        calls: list[str] = []

        def written_then_crash(*args: Any, **kwargs: Any) -> NoReturn:
            # The batch's rows are in the transaction (both stores count the
            # vocabulary after them) when the disk fills.
            calls.append("inserted")
            raise OSError("disk full")

        monkeypatch.setattr(engine.store, "_count_words", written_then_crash)
        error = await call.error(
            "index/add",
            {
                "documents": [
                    {"id": "keep", "text": "replaced words"},
                    {"id": "new", "text": "another"},
                ]
            },
        )
        monkeypatch.undo()
        assert calls == ["inserted"]
        still = await call.result("retrieve", {"query": "original", "mode": "sparse"})
        lost = await call.result("retrieve", {"query": "replaced", "mode": "sparse"})
    assert error["code"] == -32603
    assert engine.store.version == version
    assert ids_of(still) == ["keep#0"]
    assert lost["hits"] == []


async def test_a_read_only_index_refuses_writes(tmp_path: Path) -> None:
    engine = make_engine(tmp_path / "ro", writable=False)
    async with serving(engine) as peer:
        error = await Calls(peer).error("index/add", {"documents": [{"text": "x"}]})
    assert error["code"] == -32003


async def test_writes_survive_a_restart(tmp_path: Path) -> None:
    engine = make_engine(tmp_path / "idx")
    async with serving(engine) as peer:
        await Calls(peer).result("index/add", {"documents": [{"id": "p", "text": "persistent"}]})
    engine.close()
    reopened = make_engine(tmp_path / "idx")
    async with serving(reopened) as peer:
        found = await Calls(peer).result("retrieve", {"query": "persistent", "mode": "dense"})
    assert ids_of(found)[0] == "p#0"


async def test_an_oversized_add_is_payload_too_large_and_writes_nothing(tmp_path: Path) -> None:
    engine = make_engine(tmp_path / "cap", max_add_documents=2)
    async with serving(engine) as peer:
        error = await Calls(peer).error("index/add", {"documents": [{"text": "a"}] * 3})
    assert (error["code"], error["data"]["field"]) == (-32013, "documents")
    assert engine.store.version == 0


async def test_meta_title_is_the_lexical_title_of_a_document_added_without_title(
    engine: Engine,
) -> None:
    # Issue 16: clients that load a collection with the title in meta.title (and the
    # text's first line) get the weighted BM25 title field all the same.
    async with serving(engine) as peer:
        call = Calls(peer)
        documents = [
            {"id": "meta", "text": "colony survey notes one", "meta": {"title": "walrus"}},
            {"id": "field", "text": "colony survey notes two", "title": "narwhal"},
            {"id": "odd", "text": "colony survey notes three", "meta": {"title": 7}},
        ]
        await call.result("index/add", {"documents": documents})
        walrus = await call.result("retrieve", {"query": "walrus", "mode": "sparse", "k": 5})
        narwhal = await call.result("retrieve", {"query": "narwhal", "mode": "sparse", "k": 5})
        both = await call.result("retrieve", {"query": "colony", "mode": "sparse", "k": 5})
    assert [hit["meta"]["title"] for hit in walrus["hits"]] == ["walrus"]
    assert len(narwhal["hits"]) == 1  # a `title` still wins over meta.title
    assert len(both["hits"]) == 3  # a non-string meta.title indexes no title
