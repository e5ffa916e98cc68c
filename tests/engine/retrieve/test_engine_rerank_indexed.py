"""The hybrid rerank inside retrieve scores indexed rows as recall scored them (issue 33 item 3)."""

from __future__ import annotations

from pathlib import Path

from engine_support import ids, indexed, make_engine

TOPICS = ["wing lift", "boundary layer", "shock wave", "heat transfer", "panel flutter"]
DOCUMENTS = [
    {
        "id": f"d{n}",
        "title": f"{TOPICS[n % 5]} study {n}",
        "text": f"{TOPICS[n % 5]} at mach {n} with {TOPICS[(n * 3) % 5]} effects "
        + "measured in the tunnel " * (n % 4),
    }
    for n in range(16)
]


async def test_reranking_the_default_candidates_keeps_the_default_ranking(tmp_path: Path) -> None:
    engine = make_engine(tmp_path / "index")
    async with indexed(engine, DOCUMENTS) as call:
        for text in ("shock wave boundary layer", "heat transfer in the tunnel", "wing lift"):
            plain = await call.result("retrieve", {"query": text, "k": 10})
            reranked = await call.result(
                "retrieve", {"query": text, "k": 10, "rerank": {"method": "cross-encoder"}}
            )
            assert reranked["usage"]["reranked"] >= len(plain["hits"])  # the whole page
            assert ids(reranked) == ids(plain), text
    engine.close()


async def test_the_rerank_method_over_this_engines_own_hits_ranks_them_as_retrieve(
    tmp_path: Path,
) -> None:
    """§7.6 `rerank` of the texts `retrieve` returned: the rows found, scored as retrieve."""
    engine = make_engine(tmp_path / "index")
    async with indexed(engine, DOCUMENTS) as call:
        for text in ("shock wave boundary layer", "heat transfer in the tunnel"):
            hits = (await call.result("retrieve", {"query": text, "k": 16}))["hits"]
            shuffled = list(reversed(hits))
            reranked = await call.result(
                "rerank",
                {"query": text, "passages": [hit["text"] for hit in shuffled]},
            )
            # Each passage gets the score retrieve gave its row (ties may order apart).
            given = zip(shuffled, reranked["scores"], strict=True)
            scored = {hit["id"]: score for hit, score in given}
            for hit in hits:
                assert abs(scored[hit["id"]] - hit["score"]) < 1e-5, (text, hit["id"])
            # One passage that is not a row here: the whole list is scored as text.
            foreign = [hit["text"] for hit in shuffled] + ["shock wave over a wing at mach 2"]
            mixed = await call.result("rerank", {"query": text, "passages": foreign})
            assert len(mixed["scores"]) == len(foreign)
    engine.close()
