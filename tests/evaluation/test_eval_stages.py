"""The sweep follows what a server advertises (§6.1), so one harness fits every engine."""

from __future__ import annotations

import pytest

from rcpkit.evaluation.stages import available_stages, select_stages

FULL = {
    "retrieve": {"modes": ["dense", "sparse", "hybrid"], "fusion": ["rrf", "convex"],
                 "rerankBuiltin": True, "mmr": True, "rewrite": True},
    "rerank": {"methods": ["colbert"]},
    "transform": {"methods": ["rewrite", "multi-query"]},
    "graph": {"ops": ["local", "global"]},
}  # fmt: skip


def test_a_full_engine_gets_every_stage_with_the_default_first() -> None:
    stages = available_stages(FULL)
    assert [s.key for s in stages] == [
        "default", "sparse", "dense", "hybrid-rrf", "hybrid-convex", "rerank-colbert", "mmr",
        "rewrite-rewrite", "rewrite-multi-query", "graph-local",
    ]  # fmt: skip
    by_key = {s.key: s for s in stages}
    assert by_key["default"].params == {}
    assert by_key["hybrid-convex"].params == {"mode": "hybrid", "fusion": {"method": "convex"}}
    assert by_key["rerank-colbert"].params == {"rerank": {"method": "colbert"}}
    assert by_key["graph-local"].method == "graph"


def test_a_lexical_only_server_gets_the_rows_it_can_answer() -> None:
    stages = available_stages({"retrieve": {"modes": ["sparse"]}})
    assert [s.key for s in stages] == ["default", "sparse"]


def test_choosing_stages_keeps_the_given_order_and_refuses_unknown_names() -> None:
    stages = available_stages(FULL)
    assert [s.key for s in select_stages(stages, ["dense", "default", "dense"])] == [
        "dense",
        "default",
    ]
    with pytest.raises(ValueError, match=r"no stage hybrid-weighted; it offers: default, "):
        select_stages(stages, ["hybrid-weighted"])


def test_rewrite_stages_come_from_transform_methods_only() -> None:
    # The client refuses retrieve.rewrite unless transform.methods lists it (§7.7),
    # so a stage built without one would fail every query.
    keys = [s.key for s in available_stages({"retrieve": {"rewrite": True}, "transform": {}})]
    assert keys == ["default"]
    hyde = available_stages({"retrieve": {}, "transform": {"methods": ["hyde"]}})
    assert [s.key for s in hyde] == ["default", "rewrite-hyde"]
