"""The default retrieve's smoothing stage: scores move towards the nearest candidates'."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from engine_support import indexed, make_engine

from rcpkit.engine.scoring.smoothing import DEPTH, smooth, smoothed_head

DOCUMENTS = [
    {"id": "heat1", "text": "heat transfer to a flat plate in laminar flow"},
    {"id": "heat2", "text": "heat transfer to a cone in laminar flow"},
    {"id": "heat3", "text": "heat transfer through the laminar boundary layer"},
    {"id": "shock", "text": "shock waves over a wedge at mach three, heat"},
    {"id": "flutter", "text": "panel flutter of a thin plate in supersonic flow"},
    {"id": "lift", "text": "lift of a slender wing at high angles of attack"},
]
QUERY = "heat transfer in laminar flow"


def test_a_score_moves_towards_its_nearest_neighbours_by_their_cosine() -> None:
    vectors = np.asarray([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0], [-1.0, 0.0], [0.6, 0.8]])
    scores = [0.6, 0.5, 0.7, 0.1, 0.95]
    moved = smooth(scores, vectors, weight=0.5, neighbours=2)
    # row 0's two nearest: row 1 (cosine 0.8) and row 4 (0.6)
    assert moved[0] == pytest.approx(0.5 * 0.6 + 0.5 * (0.8 * 0.5 + 0.6 * 0.95) / 1.4)
    # row 3's nearest two have cosines 0 and -0.6: no positive neighbour, it keeps its score
    assert moved[3] == pytest.approx(0.1)
    assert list(smooth(scores, vectors, weight=0.0)) == scores


def test_the_best_candidate_is_never_lowered() -> None:
    # the best (row 0) among weaker look-alikes keeps its score; the next one moves down
    vectors = np.asarray([[1.0, 0.0], [0.99, 0.14], [0.98, 0.2]])
    moved = smooth([0.9, 0.8, 0.2], vectors, weight=0.5)
    assert moved[0] == 0.9
    assert moved[1] < 0.8
    assert list(np.argsort(-moved)) == [0, 1, 2]


def test_the_head_is_smoothed_and_stays_above_the_candidates_past_it() -> None:
    rng = np.random.default_rng(7)
    keys = list(range(DEPTH + 20))
    scores = dict(zip(keys, rng.random(len(keys)).tolist(), strict=True))
    rows = rng.normal(size=(len(keys), 8))
    vectors = dict(zip(keys, rows / np.linalg.norm(rows, axis=1, keepdims=True), strict=True))
    del vectors[keys[0]]  # a key without a stored vector keeps its score
    after = smoothed_head(scores, vectors, 0.3)
    ranked = sorted(scores, key=lambda key: (-scores[key], key))
    head, tail = ranked[:DEPTH], ranked[DEPTH:]
    assert all(after[key] == scores[key] for key in [*tail, keys[0]])
    # all of the head moved but the best and the key without a vector
    assert sum(after[key] != scores[key] for key in head) >= DEPTH - 2
    assert min(after[key] for key in head) >= max(scores[key] for key in tail)


async def _retrieve(folder: Path, **settings: Any) -> dict[str, Any]:
    engine = make_engine(folder, **settings)
    async with indexed(engine, DOCUMENTS) as call:
        asked = {"query": QUERY, "k": len(DOCUMENTS), "includeVectors": True}
        result = await call.result("retrieve", asked)
    engine.close()
    return result


async def test_the_default_smooths_every_candidate_among_the_others(tmp_path: Path) -> None:
    off = await _retrieve(tmp_path / "off", smoothing_weight=0.0)
    on = await _retrieve(tmp_path / "on", smoothing_weight=0.5)
    assert "smoothing" not in off["usage"]["stages"]
    assert "smoothing" in on["usage"]["stages"]
    before = {hit["id"]: hit["score"] for hit in off["hits"]}
    vectors = {hit["id"]: np.asarray(hit["vector"]) for hit in off["hits"]}
    assert len(before) == len(DOCUMENTS)  # every candidate is on the page
    ids = list(before)
    expected = smooth([before[i] for i in ids], np.stack([vectors[i] for i in ids]), 0.5)
    for hit in on["hits"]:
        want = expected[ids.index(hit["id"])]
        assert hit["score"] == pytest.approx(want, abs=1e-6), hit["id"]
        change = hit["scores"].get("smoothing", 0.0)  # none where the score stayed
        assert change == pytest.approx(want - before[hit["id"]], abs=1e-6)
    scores = [hit["score"] for hit in on["hits"]]
    assert scores == sorted(scores, reverse=True)
    assert on["hits"][0]["score"] >= off["hits"][0]["score"]  # the best is never lowered


async def test_an_explicit_mode_or_fusion_gets_no_smoothing_stage(tmp_path: Path) -> None:
    engine = make_engine(tmp_path / "index")
    async with indexed(engine, DOCUMENTS) as call:
        for params in ({"mode": "sparse"}, {"fusion": {"method": "rrf"}}):
            result = await call.result("retrieve", {"query": QUERY, "k": 5, **params})
            assert "smoothing" not in result["usage"]["stages"], params
    engine.close()


async def test_the_text_rerank_smooths_the_passages_by_their_embeddings(tmp_path: Path) -> None:
    """§7.6 `rerank` of passages that are not rows here: smoothed as retrieve smooths."""
    passages = [f"a note on {d['text']}" for d in DOCUMENTS]
    scores = {}
    for weight in (0.0, 0.5):
        engine = make_engine(tmp_path / str(weight), smoothing_weight=weight)
        async with indexed(engine, DOCUMENTS[4:]) as call:
            asked = {"query": QUERY, "passages": passages}
            scores[weight] = (await call.result("rerank", asked))["scores"]
            embedded = await call.result("embed", {"inputs": passages, "kind": "document"})
        engine.close()
    expected = smooth(scores[0.0], np.asarray(embedded["vectors"]), 0.5)
    assert scores[0.5] == pytest.approx(list(expected), abs=1e-6)
