"""``rcpkit.open(...).search`` ranks exactly as ``retrieve`` over RCP, on the same index.

The index is built in process with the bundled MiniLM; the server is the real
``rcpkit serve`` over stdio, reached through the rcpkit client.
"""

from __future__ import annotations

import sys
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

import rcpkit
from rcpkit.client import Client

SAMPLES = Path(str(resources.files("rcpkit") / "samples"))
NOTES = [
    {
        "id": "rrf",
        "text": "Reciprocal rank fusion adds 1/(k + rank) per list.",
        "meta": {"team": "search", "level": 2},
    },
    {
        "id": "bm25",
        "text": "BM25 saturates term frequency with k1 and normalises length with b.",
        "meta": {"team": "search", "level": 1},
    },
    {
        "id": "refunds",
        "text": "Refunds are paid within 14 days of a return.",
        "meta": {"team": "billing", "level": 1},
    },
]

# (library keywords, the same options as retrieve params on the wire)
CASES: list[tuple[dict[str, Any], dict[str, Any]]] = [
    ({}, {}),
    ({"k": 3, "mode": "sparse"}, {"k": 3, "mode": "sparse"}),
    ({"k": 4, "mode": "dense"}, {"k": 4, "mode": "dense"}),
    (
        {"k": 5, "filter": {"team": "search"}},
        {"k": 5, "filter": {"field": "team", "op": "eq", "value": "search"}},
    ),
    (
        {"k": 4, "fusion": {"method": "rrf", "rrf_k": 30}, "unit": "document"},
        {"k": 4, "fusion": {"method": "rrf", "rrfK": 30}, "unit": "document"},
    ),
    ({"k": 4, "rerank": True, "mmr": 0.7}, {"k": 4, "rerank": {}, "mmr": {"lambda": 0.7}}),
    ({"k": 6, "token_budget": 450}, {"k": 6, "tokenBudget": 450}),
    (
        {"k": 3, "mode": "hybrid", "filter": {"ext": [".md"]}},
        {"k": 3, "mode": "hybrid", "filter": {"field": "ext", "op": "in", "value": [".md"]}},
    ),
]
QUERY = "how are the ranked lists of two retrievers fused"


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("library") / "idx"
    with rcpkit.open(where, create=True) as index:
        index.add_paths([SAMPLES])
        index.add(NOTES)
    return where


@pytest.fixture(scope="module")
def served(folder: Path) -> list[dict[str, Any]]:
    """Each case's retrieve result (and the second page of the first) from the server."""

    async def ask() -> list[dict[str, Any]]:
        command = [sys.executable, "-m", "rcpkit", "serve", "--index", str(folder)]
        async with await Client.connect_stdio(command, pass_env=["PYTHONPATH"]) as client:
            answers = [await client.call("retrieve", {"query": QUERY, **wire}) for _, wire in CASES]
            cursor = answers[0]["nextCursor"]
            answers.append(await client.call("retrieve", {"query": QUERY, "cursor": cursor}))
            return answers

    import asyncio

    return asyncio.run(ask())


def _ranked(hits: list[Any]) -> list[tuple[str, float]]:
    return [
        (hit["id"], hit["score"]) if isinstance(hit, dict) else (hit.id, hit.score) for hit in hits
    ]


def _assert_same(found: list[tuple[str, float]], expected: list[tuple[str, float]]) -> None:
    assert [hit_id for hit_id, _ in found] == [hit_id for hit_id, _ in expected]
    assert [score for _, score in found] == pytest.approx([score for _, score in expected])


@pytest.mark.parametrize("case", range(len(CASES)))
def test_search_gives_retrieve_s_hits_in_retrieve_s_order(
    folder: Path, served: list[dict[str, Any]], case: int
) -> None:
    options, _ = CASES[case]
    with rcpkit.open(folder) as index:
        found = index.search(QUERY, **options)
    assert served[case]["hits"], "the case must find something to compare"
    _assert_same(_ranked(found.hits), _ranked(served[case]["hits"]))
    assert found.index_version == served[case]["indexVersion"]


def test_a_cursor_from_the_server_continues_in_process_as_it_does_over_rcp(
    folder: Path, served: list[dict[str, Any]]
) -> None:
    with rcpkit.open(folder) as index:
        second = index.search(QUERY, cursor=served[0]["nextCursor"])
    _assert_same(_ranked(second.hits), _ranked(served[-1]["hits"]))
    assert second.hits, "the default page leaves more to read"


def test_hits_carry_text_citation_and_meta(folder: Path) -> None:
    with rcpkit.open(folder) as index:
        hits = index.search("refunds after a return", k=1, filter={"team": "billing"})
    (hit,) = hits
    assert hit.id == "refunds#0"
    assert hit.text == NOTES[2]["text"]
    assert hit.citation is not None and hit.citation.source == "refunds"
    assert hit.meta is not None and hit.meta["level"] == 1
