"""The default retrieve's proximity stage: query-term pairs close together (issue 33)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from engine_support import indexed, make_engine

from rcpkit.engine.scoring.proximity import (
    pair_bound,
    pairs_of,
    positions_of,
    proximity_scores,
    query_pairs,
)

FILLER = "across the boundary layer of a swept wing surface panel near the trailing edge"
DOCUMENTS = [
    # "heat transfer" side by side; the same words with the pair eleven terms apart
    {"id": "near", "text": f"heat transfer {FILLER}"},
    {"id": "far", "text": f"heat heat {FILLER} transfer transfer"},
    {"id": "x1", "text": "shock waves over a wedge at mach three"},
    {"id": "x2", "text": "panel flutter of a thin plate in supersonic flow"},
    {"id": "x3", "text": "lift of a slender wing at high angles of attack"},
]


def test_a_pair_counts_within_the_window_and_not_past_it() -> None:
    assert pairs_of(["heat", "transfer", "heat", "flux", "flux"]) == [
        ("heat", "transfer"),
        ("transfer", "heat"),
        ("heat", "flux"),
    ]
    idf = {"a": 2.0, "b": 1.0}
    apart = [positions_of(["a", *["z"] * gap, "b"]) for gap in (0, 7, 8)]  # distance 1, 8, 9
    assert proximity_scores([("a", "b")], apart, idf, k1=1.0, window=8) == [1.5, 1.5, 0.0]
    # two co-occurrences saturate as BM25 does: 2 · (k1 + 1) / (2 + k1)
    twice = positions_of(["a", "b", "a"])
    assert proximity_scores([("a", "b")], [twice], idf, k1=1.0) == [pytest.approx(1.5 * 4 / 3)]
    assert pair_bound([("a", "b")], idf, k1=1.0) == 3.0  # every count saturated


def test_an_identifiers_pairs_are_those_a_code_row_can_hold() -> None:
    # The prose form the lexical arm adds ("parse_filt": tokens parse, filt) is not
    # paired with the code forms: no row holds both, and the bound would only grow.
    assert query_pairs("parse_filter tokens") == [
        ("parsefilt", "pars"),
        ("pars", "filter"),
        ("filter", "token"),
    ]


async def _hits(folder: Path, **settings: Any) -> dict[str, dict[str, Any]]:
    # The smoothing stage after this one off: these check the shares' arithmetic.
    engine = make_engine(folder, smoothing_weight=0.0, **settings)
    async with indexed(engine, DOCUMENTS) as call:
        result = await call.result("retrieve", {"query": "heat transfer", "k": 5})
    engine.close()
    hits = {hit["id"].partition("#")[0]: hit for hit in result["hits"]}
    return {"hits": hits, "stages": result["usage"]["stages"]}


async def test_the_default_adds_each_candidates_share_of_near_pairs(tmp_path: Path) -> None:
    off = await _hits(tmp_path / "off", proximity_weight=0.0)
    on = await _hits(tmp_path / "on", proximity_weight=0.5)
    assert "proximity" not in off["stages"]
    assert "proximity" in on["stages"]
    near, far = on["hits"]["near"], on["hits"]["far"]
    # one co-occurrence of the only pair: idf · (k1 + 1) / (1 + k1) of a bound idf · (k1 + 1)
    assert near["scores"]["proximity"] == pytest.approx(1 / (0.9 + 1))
    assert "proximity" not in far["scores"]  # eleven terms apart: no share
    for name, share in (("near", 1 / 1.9), ("far", 0.0)):
        before = off["hits"][name]["score"]
        assert on["hits"][name]["score"] == pytest.approx((before + 0.5 * share) / 1.5)


async def test_the_pair_side_by_side_outranks_the_same_words_apart(tmp_path: Path) -> None:
    found = await _hits(tmp_path / "index", proximity_weight=10.0)
    assert found["hits"]["near"]["score"] > found["hits"]["far"]["score"]


async def test_an_explicit_mode_or_fusion_gets_no_proximity_stage(tmp_path: Path) -> None:
    engine = make_engine(tmp_path / "index")
    async with indexed(engine, DOCUMENTS) as call:
        for params in ({"mode": "sparse"}, {"fusion": {"method": "rrf"}}):
            result = await call.result("retrieve", {"query": "heat transfer", "k": 5, **params})
            assert "proximity" not in result["usage"]["stages"], params
    engine.close()


async def test_the_text_rerank_adds_the_same_share(tmp_path: Path) -> None:
    """§7.6 `rerank` of passages that are not rows here: the text scorer's proximity."""
    passages = [f"a note on heat transfer {FILLER}", f"a note on heat {FILLER} transfer"]
    scores = {}
    for weight in (0.0, 0.5):
        engine = make_engine(tmp_path / str(weight), proximity_weight=weight, smoothing_weight=0)
        async with indexed(engine, DOCUMENTS[2:]) as call:
            asked = {"query": "heat transfer", "passages": passages}
            scores[weight] = (await call.result("rerank", asked))["scores"]
        engine.close()
    shares = [1 / 1.9, 0.0]
    for before, after, share in zip(scores[0.0], scores[0.5], shares, strict=True):
        assert after == pytest.approx((before + 0.5 * share) / 1.5, abs=1e-6)


async def test_reranking_own_hits_past_the_stages_depth_keeps_their_scores(
    tmp_path: Path,
) -> None:
    """The stage scores the fused top 30; a rerank of 40 own hits gives the rest no share."""
    notes = [
        {"id": f"n{n:02d}", "text": f"heat transfer note{n} " + "wing " * (n % 7) + FILLER}
        for n in range(40)
    ]
    engine = make_engine(tmp_path / "index")
    async with indexed(engine, notes) as call:
        hits = (await call.result("retrieve", {"query": "heat transfer wing", "k": 40}))["hits"]
        assert len(hits) == 40
        assert all("proximity" in hit["scores"] for hit in hits[:30])
        assert not any("proximity" in hit["scores"] for hit in hits[30:])
        asked = {"query": "heat transfer wing", "passages": [hit["text"] for hit in hits]}
        scores = (await call.result("rerank", asked))["scores"]
    engine.close()
    for hit, score in zip(hits, scores, strict=True):
        assert score == pytest.approx(hit["score"], abs=1e-5), hit["id"]
