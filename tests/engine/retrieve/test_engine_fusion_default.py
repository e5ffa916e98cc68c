"""What an omitted or partly spelled `fusion` means (issue 16, §16.3)."""

from __future__ import annotations

from rcpkit.engine.retrieve.recall import DEFAULT_FUSION, effective_fusion
from rcpkit.protocol import messages as m


def test_an_omitted_fusion_is_the_convex_combination_chosen_on_the_dev_halves() -> None:
    assert effective_fusion(None) == m.Fusion(method="convex", rrf_k=60, alpha=0.85)
    assert effective_fusion(None) == DEFAULT_FUSION


def test_a_fusion_the_client_sends_means_what_section_16_3_says() -> None:
    # Without `method` RRF (the spec's default strategy), without `alpha` α 0.5.
    assert effective_fusion(m.Fusion()) == m.Fusion(method="rrf", rrf_k=60, alpha=0.5)
    assert effective_fusion(m.Fusion(method="convex")).alpha == 0.5
    spelled = m.Fusion(method="weighted", weights={"dense": 2.0}, rrf_k=10, alpha=0.3)
    assert effective_fusion(spelled) == spelled
