"""§7.7.2 document units on the engine: whole documents, paged (§10) to the last one."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from engine_support import Calls, ids, indexed

from rcpkit.engine.engine import Engine


def _long(number: int) -> dict[str, Any]:
    """A document the engine cuts into about ten overlapping chunks."""
    sentences = (f"Sentence {n} of report {number} covers topic {n % 5}." for n in range(200))
    return {"id": f"report-{number}", "text": " ".join(sentences)}


async def _every_page(call: Calls, params: dict[str, Any]) -> list[str]:
    listed: list[str] = []
    cursor = None
    while True:
        page = await call.result("retrieve", {**params, **({"cursor": cursor} if cursor else {})})
        listed += ids(page)
        cursor = page.get("nextCursor")
        if not cursor or not page["hits"]:
            return listed


async def test_document_pages_list_every_document_once_past_the_recall_pool(
    engine: Engine,
) -> None:
    # 400 chunks, 40 documents: the recall pool (100 chunks) holds some 30 of them, and the
    # pages stopped there, as if the other 10 did not exist.
    documents = [_long(number) for number in range(40)]
    async with indexed(engine, documents) as call:
        assert engine.store.count() == (40, 400)
        for k in (7, 100):
            params = {"query": "topic", "k": k, "mode": "dense", "unit": "document"}
            listed = await _every_page(call, params)
            assert sorted(listed) == sorted(d["id"] for d in documents), k


async def test_a_min_score_that_cuts_the_pool_does_not_widen_it(engine: Engine) -> None:
    # Widening past a pool whose tail is below minScore would only add what ranks lower:
    # it would read the whole index for a query few chunks pass.
    async with indexed(engine, [_long(number) for number in range(40)]) as call:
        query = {"query": "topic", "k": 50, "mode": "dense", "unit": "document"}
        plain = await call.result("retrieve", query)
        scores = sorted(hit["score"] for hit in plain["hits"])
        floored = await call.result("retrieve", {**query, "minScore": scores[len(scores) // 2]})
    assert plain["usage"]["candidates"] > 100  # the pool widened to find 40 documents
    assert floored["usage"]["candidates"] <= 100
    assert 0 < len(floored["hits"]) < len(plain["hits"])


async def test_a_document_hit_carries_the_document_as_added(engine: Engine) -> None:
    documents = [_long(number) for number in range(3)]
    async with indexed(engine, documents) as call:
        found = await call.result("retrieve", {"query": "report 1", "k": 3, "unit": "document"})
    texts = {document["id"]: document["text"] for document in documents}
    for hit in found["hits"]:
        assert hit["text"] == texts[hit["id"]]
        assert (hit["citation"]["start"], hit["citation"]["end"]) == (0, len(hit["text"]))


async def test_a_document_hit_keeps_the_regions_of_its_whole_span(engine: Engine) -> None:
    # OCR regions ([page, start, end, x0, y0, x1, y1]) are narrowed to what a hit cites:
    # a chunk's span for a chunk hit, the whole document for a document hit.
    document = _long(0)
    length = len(document["text"])
    regions = [[1, start, start + 50, 0, 0, 10, 10] for start in range(0, length - 50, 500)]
    async with indexed(engine, [{**document, "meta": {"regions": regions}}]) as call:
        query = {"query": "report 0 topic", "k": 1}
        chunk = (await call.result("retrieve", query))["hits"][0]
        whole = (await call.result("retrieve", {**query, "unit": "document"}))["hits"][0]
    start, end = chunk["citation"]["start"], chunk["citation"]["end"]
    assert chunk["meta"]["regions"] == [r for r in regions if r[1] < end and r[2] > start]
    assert whole["meta"]["regions"] == regions


async def test_a_document_page_reads_the_rows_of_its_head_not_of_the_whole_pool(
    engine: Engine,
) -> None:
    # A unit ranks by its first chunk in the ranking, so the page and one unit more are
    # all a document page needs; reading every pooled chunk's row to find its document
    # cost the default 1.2-1.3x its p50 at k 100 once the pool doubled (issue 50).
    read: list[int] = []
    fetch = engine.store.fetch

    def recording(keys: Sequence[int]) -> dict[int, Any]:
        read.extend(keys)
        return fetch(keys)

    async with indexed(engine, [_long(number) for number in range(40)]) as call:
        engine.store.fetch = recording  # type: ignore[method-assign]
        found = await call.result("retrieve", {"query": "report topic", "k": 3, "unit": "document"})
    assert len(found["hits"]) == 3
    assert len(set(read)) < found["usage"]["candidates"] / 2


@pytest.mark.parametrize("k", [1, 4, 9])
async def test_a_document_page_is_the_chunk_rankings_documents_in_first_appearance(
    engine: Engine, k: int
) -> None:
    pool = {"query": "report topic 3", "candidateK": 80}
    async with indexed(engine, [_long(number) for number in range(40)]) as call:
        chunks = await call.result("retrieve", {**pool, "k": 80})
        documents = await call.result("retrieve", {**pool, "k": k, "unit": "document"})
    first_seen = list(dict.fromkeys(hit["chunk"]["docId"] for hit in chunks["hits"]))
    assert len(first_seen) > k
    assert ids(documents) == first_seen[:k]
    assert documents["nextCursor"]
