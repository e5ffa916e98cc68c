"""What an omitted or partly spelled `fusion` means (issue 16, §16.3)."""

from __future__ import annotations

from rcpkit.engine.query import DEFAULT_FUSION, Fusion, Query
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
