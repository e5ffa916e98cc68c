"""x-rcpkit/stats and x-rcpkit/document (§6.2 extensions): what `rcpkit stats` and `rcpkit
show` print, over RCP, read-only and inside the caller's tenant (§15.6)."""

from __future__ import annotations

import pytest
from engine_support import Calls, serving

from rcpkit.engine.engine import Engine
from rcpkit.handlers.inspect import index_figures

TEXT = "First paragraph about walruses.\n\n" + "Second paragraph about narwhals. " * 120


async def test_the_extension_is_advertised_and_stats_match_what_rcpkit_stats_prints(
    engine: Engine,
) -> None:
    async with serving(engine) as peer:
        call = Calls(peer)
        info = await call.result("info", {})
        await call.result("index/add", {"documents": [{"id": "d", "text": TEXT}]})
        stats = await call.result("x-rcpkit/stats", {})
    assert info["capabilities"]["x-rcpkit"]["methods"] == ["x-rcpkit/stats", "x-rcpkit/document"]
    figures = index_figures(engine.store)
    assert stats["documents"] == figures["documents"] == 1
    assert stats["chunks"] == figures["chunks"] > 1
    assert stats["indexVersion"] == str(figures["version"])
    assert stats["embedder"] == engine.identity
    assert stats["tenants"] == 1 and stats["sizeBytes"] > 0


async def test_a_document_comes_back_with_its_text_and_the_spans_of_its_chunks(
    engine: Engine,
) -> None:
    async with serving(engine) as peer:
        call = Calls(peer)
        await call.result("index/add", {"documents": [{"id": "d", "title": "T", "text": TEXT}]})
        hit = (await call.result("retrieve", {"query": "walruses", "k": 1, "mode": "sparse"}))[
            "hits"
        ][0]
        shown = await call.result("x-rcpkit/document", {"id": "d"})
        later = await call.result("x-rcpkit/document", {"id": "d", "start": 40})
    assert (shown["text"], shown["title"], shown["length"]) == (TEXT, "T", len(TEXT))
    spans = [(chunk["start"], chunk["end"]) for chunk in shown["chunks"]]
    assert [chunk["index"] for chunk in shown["chunks"]] == list(range(len(spans)))
    assert spans[0][0] == 0 and spans[-1][1] == len(TEXT.rstrip())
    # The hit's citation offsets index this text: the cited span is one of the chunks.
    assert (hit["citation"]["start"], hit["citation"]["end"]) in spans
    assert hit["text"] == TEXT[hit["citation"]["start"] : hit["citation"]["end"]]
    assert later["start"] == 40 and later["text"] == TEXT[40:]


async def test_bad_or_foreign_document_ids_are_invalid_params_worded_alike(
    engine: Engine,
) -> None:
    async with serving(engine, tenant="acme") as acme:
        await Calls(acme).result("index/add", {"documents": [{"id": "mine", "text": "acme only"}]})
    async with serving(engine, tenant="globex") as globex:
        call = Calls(globex)
        foreign = await call.error("x-rcpkit/document", {"id": "mine"})
        missing = await call.error("x-rcpkit/document", {"id": "nothing"})
        no_id = await call.error("x-rcpkit/document", {})
        bad_start = await call.error("x-rcpkit/document", {"id": "mine", "start": -1})
        stats = await call.result("x-rcpkit/stats", {})
    assert foreign["code"] == missing["code"] == no_id["code"] == bad_start["code"] == -32602
    assert foreign["message"].replace("mine", "X") == missing["message"].replace("nothing", "X")
    assert (no_id["data"]["field"], bad_start["data"]["field"]) == ("id", "start")
    # A scoped caller sees its own tenant's figures, nothing of the shared database.
    assert (stats["documents"], stats["chunks"]) == (0, 0)
    assert not {"tenants", "sizeBytes", "root"} & set(stats)


async def test_stats_count_the_ingested_documents_without_listing_the_corpus(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A listing of every document per stats call grew a Solr-backed server's memory with
    the corpus (issue 48); the store counts them instead."""
    async with serving(engine) as peer:
        call = Calls(peer)
        await call.result("index/add", {"documents": [{"id": "a", "text": "by index/add"}]})

        def listed(tenant: str | None = None) -> list[tuple[str, str | None, str]]:
            raise AssertionError("x-rcpkit/stats listed every live document")

        monkeypatch.setattr(engine.store, "live_documents", listed)
        stats = await call.result("x-rcpkit/stats", {})
    assert stats["documents"] == 1
    assert index_figures(engine.store)["ingested"] == 0  # index/add is not `rcpkit index`
