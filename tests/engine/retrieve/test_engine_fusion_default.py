"""What an omitted or partly spelled `fusion` means (issue 16, §16.3)."""

from __future__ import annotations

import pytest

from rcpkit.engine.query import DEFAULT_FUSION, Fusion, Query
from rcpkit.engine.retrieve.recall import combine
from rcpkit.handlers.query import query_of
from rcpkit.protocol import messages as m


def _fusion(wire: m.Fusion | None) -> Fusion:
    return query_of(m.RetrieveParams(query="q", fusion=wire), None).effective_fusion


def test_an_omitted_fusion_is_the_convex_combination_chosen_on_the_dev_halves() -> None:
    assert _fusion(None) == Fusion(method="convex", rrf_k=60, alpha=0.85)
    assert _fusion(None) == DEFAULT_FUSION


def test_a_fusion_the_client_sends_means_what_section_16_3_says() -> None:
    # Without `method` RRF (the spec's default strategy), without `alpha` α 0.5.
    assert _fusion(m.Fusion()) == Fusion(method="rrf", rrf_k=60, alpha=0.5)
    assert _fusion(m.Fusion(method="convex")).alpha == 0.5
    spelled = m.Fusion(method="weighted", weights={"dense": 2.0}, rrf_k=10, alpha=0.3)
    assert _fusion(spelled) == Fusion(
        method="weighted", rrf_k=10, alpha=0.3, weights={"dense": 2.0}
    )


def test_a_cursor_binds_the_effective_options_and_not_the_cursor() -> None:
    # §10: an omitted mode and "hybrid" are one query; an omitted fusion is not the
    # default spelled out (only the former takes the feedback pass).
    plain = query_of(m.RetrieveParams(query="q", k=3), None)
    assert plain.digest(None) == query_of(
        m.RetrieveParams(query="q", k=3, mode="hybrid"), None
    ).digest(None)
    assert plain.digest(None) == Query("q", k=3, cursor="abc", index_version="2").digest(None)
    spelled = Query("q", k=3, fusion=DEFAULT_FUSION)
    assert plain.digest(None) != spelled.digest(None)
    assert plain.digest(None) != Query("q", k=4).digest(None)
    assert plain.digest(None) != plain.digest("tenant-a")


DENSE = [(1, 0.05), (2, -0.02), (3, -0.06)]  # cosines of chunks unrelated to the query


def test_a_dense_arm_alone_is_not_scaled_so_its_nearest_chunk_is_a_perfect_hit() -> None:
    # Issue 52: no chunk holds a query word, so the lexical arm is empty; min-max over the
    # dense arm alone made the best unrelated chunk 1 · α. Scaled by cosine's range
    # instead, a score says how near it is, and the order is the dense arm's.
    for fusion in (DEFAULT_FUSION, Fusion(method="weighted"), Fusion(method="convex")):
        fused = combine({"dense": DENSE, "sparse": []}, Query("q", fusion=fusion))
        assert [c.key for c in fused] == [1, 2, 3]
        for candidate, (_, cosine) in zip(fused, DENSE, strict=True):
            assert candidate.score <= (cosine + 1) / 2 < 0.53


def test_where_a_query_word_matches_the_fusion_is_min_max_as_before() -> None:
    sparse = [(3, 2.0), (1, 1.0)]
    fused = combine({"dense": DENSE, "sparse": sparse}, Query("q"))
    scores = {c.key: c.score for c in fused}
    alpha = DEFAULT_FUSION.alpha
    assert scores[1] == pytest.approx(alpha + (1 - alpha) * 0.5)  # the dense arm's best: 1
    assert scores[3] == pytest.approx(alpha * (1 - 0.06) / (1 + 0.05) + (1 - alpha))
