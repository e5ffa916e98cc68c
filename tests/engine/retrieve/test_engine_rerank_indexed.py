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
