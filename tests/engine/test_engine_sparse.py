"""embed/sparse (§7.4) is advertised and served only when a learned-sparse model is configured."""

from __future__ import annotations

from pathlib import Path

from engine_support import Calls, make_engine, serving

from rcpkit.engine.engine import Engine


async def test_embed_sparse_is_absent_without_a_sparse_model(engine: Engine) -> None:
    async with serving(engine) as peer:
        call = Calls(peer)
        info = await call.result("info", {})
        error = await call.error("embed/sparse", {"texts": ["x"]})
    assert "sparseEmbed" not in info["capabilities"]
    assert error["code"] == -32003


async def test_embed_sparse_returns_one_sorted_non_negative_vector_per_text(tmp_path: Path) -> None:
    engine = make_engine(tmp_path / "sparse", sparse="hashing:1000")
    async with serving(engine) as peer:
        call = Calls(peer)
        info = await call.result("info", {})
        result = await call.result("embed/sparse", {"inputs": ["red fox", "blue whale swims"]})
    assert info["capabilities"]["sparseEmbed"]["vocabulary"] == 1000
    assert len(result["sparse"]) == 2
    for vector in result["sparse"]:
        assert vector["indices"] == sorted(vector["indices"])
        assert all(value >= 0 for value in vector["values"])
        assert len(vector["indices"]) == len(vector["values"]) > 0
    engine.close()


async def test_a_learned_sparse_model_joins_sparse_and_hybrid_recall(tmp_path: Path) -> None:
    engine = make_engine(tmp_path / "splade", sparse="hashing:4096")
    async with serving(engine) as peer:
        call = Calls(peer)
        await call.result(
            "index/add",
            {
                "documents": [
                    {"id": "a", "text": "tidal energy from ocean currents"},
                    {"id": "b", "text": "solar energy from photovoltaic cells"},
                ]
            },
        )
        sparse = await call.result("retrieve", {"query": "ocean tidal", "mode": "sparse"})
        hybrid = await call.result("retrieve", {"query": "ocean tidal", "mode": "hybrid"})
        await call.result("index/delete", {"ids": ["a"]})
        after = await call.result("retrieve", {"query": "ocean tidal", "mode": "sparse"})
    assert sparse["hits"][0]["id"] == "a#0"
    assert {"sparse", "splade", "fused"} <= set(sparse["hits"][0]["scores"])
    assert {"dense", "sparse", "splade"} <= set(hybrid["hits"][0]["scores"])
    assert all(hit["id"] != "a#0" for hit in after["hits"])
    engine.close()
