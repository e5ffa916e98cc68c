"""§16.3 fusion across engines: RRF, weighted, convex, tie-breaks and de-duplication."""

from __future__ import annotations

import pytest

from rcpkit.federation import EngineHits, FusionConfig, fuse_hits
from rcpkit.protocol.content import Citation, Hit


def _hits(*ids: str, scores: list[float] | None = None) -> list[Hit]:
    values = scores or [float(len(ids) - n) for n in range(len(ids))]
    return [Hit(id=id, score=score) for id, score in zip(ids, values, strict=True)]


def test_rrf_sums_weight_over_k_plus_rank() -> None:
    fused = fuse_hits(
        [EngineHits("a", _hits("x", "y")), EngineHits("b", _hits("y", "z"), weight=2.0)],
        None,
        FusionConfig(),
    )
    scores = {str(hit.id): hit.score for hit in fused.hits}
    assert scores["y"] == pytest.approx(1 / 62 + 2 / 61)
    assert scores["x"] == pytest.approx(1 / 61)
    assert scores["z"] == pytest.approx(2 / 62)
    assert [hit.id for hit in fused.hits] == ["y", "z", "x"]


def test_every_fused_hit_carries_its_engine_rank_score_and_fused_score() -> None:
    fused = fuse_hits([EngineHits("a", _hits("x", "y", scores=[9.0, 4.0]))], 1, FusionConfig())
    (hit,) = fused.hits
    assert hit.meta == {"engine": "a", "engineRank": 1, "engineScore": 9.0, "fusedScore": hit.score}


def test_ties_break_on_summed_weight_then_the_smaller_stringified_id() -> None:
    lists = [EngineHits("a", _hits("b2")), EngineHits("b", _hits("a1"))]
    first = fuse_hits(lists, None, FusionConfig())
    second = fuse_hits(list(reversed(lists)), None, FusionConfig())
    assert [h.id for h in first.hits] == [h.id for h in second.hits] == ["a1", "b2"]
    weighted = fuse_hits(
        [EngineHits("a", _hits("zz"), weight=1.0), EngineHits("b", _hits("aa"), weight=1.0)],
        None,
        FusionConfig(rrf_k=60, weights={"a": 1.0}),
    )
    assert [h.id for h in weighted.hits] == ["aa", "zz"]


def test_weighted_fusion_min_max_normalises_each_engine() -> None:
    fused = fuse_hits(
        [
            EngineHits("bm25", _hits("x", "y", scores=[30.0, 10.0])),
            EngineHits("cos", _hits("y", "x", scores=[0.9, 0.1])),
        ],
        None,
        FusionConfig(method="weighted"),
    )
    assert {str(h.id): h.score for h in fused.hits} == {"x": 1.0, "y": 1.0}


def test_convex_anchors_each_engine_at_its_declared_floor() -> None:
    fused = fuse_hits(
        [
            EngineHits("a", _hits("x", "y", scores=[1.0, 0.5]), score_floor=0.0),
            EngineHits("b", _hits("y", scores=[0.0]), score_floor=-1.0),
        ],
        None,
        FusionConfig(method="convex"),
    )
    assert fused.method == "convex"
    scores = {str(h.id): h.score for h in fused.hits}
    assert scores["x"] == pytest.approx(0.5 * 1.0)
    assert scores["y"] == pytest.approx(0.5 * 0.5 + 0.5 * 1.0)


def test_convex_falls_back_to_rrf_when_an_engine_has_no_floor() -> None:
    fused = fuse_hits(
        [EngineHits("a", _hits("x"), score_floor=0.0), EngineHits("b", _hits("y"))],
        None,
        FusionConfig(method="convex"),
    )
    assert fused.method == "rrf"
    assert "['b']" in fused.notes[0]


def test_duplicates_keep_the_richest_body_and_merge_meta() -> None:
    short = Hit(id="d", score=5.0, text="short", meta={"lang": "en", "from": "a"})
    long = Hit(id="d", score=0.2, text="a much longer body", meta={"year": 2024, "from": "b"})
    fused = fuse_hits([EngineHits("a", [short]), EngineHits("b", [long])], None, FusionConfig())
    (hit,) = fused.hits
    assert hit.text == "a much longer body"
    assert hit.meta is not None
    assert hit.meta["lang"] == "en" and hit.meta["year"] == 2024 and hit.meta["from"] == "b"
    assert hit.meta["engine"] == "b" and hit.meta["engines"] == ["a", "b"]


def test_dedup_by_content_hash_or_citation_uri_when_asked() -> None:
    one = Hit(id="a-1", score=1.0, text="same  text", citation=Citation(source="s", uri="u:1"))
    two = Hit(id="b-9", score=1.0, text="same text", citation=Citation(source="t", uri="u:1"))
    assert (
        len(fuse_hits([EngineHits("a", [one]), EngineHits("b", [two])], None, FusionConfig()).hits)
        == 2
    )
    for key in ("content", "uri"):
        lists = [EngineHits("a", [one]), EngineHits("b", [two])]
        assert len(fuse_hits(lists, None, FusionConfig(dedup=key)).hits) == 1


def test_k_truncates_and_bad_configs_are_refused() -> None:
    assert len(fuse_hits([EngineHits("a", _hits("x", "y", "z"))], 2, FusionConfig()).hits) == 2
    with pytest.raises(ValueError, match="fusion method"):
        FusionConfig(method="median")
    with pytest.raises(ValueError, match="dedup"):
        FusionConfig(dedup="title")
