from __future__ import annotations

from pathlib import Path

from graph_support import POLAR_ENTITIES, make_graph

from rcpkit.engine.graph import KnowledgeGraph


def _named_ids(graph: KnowledgeGraph, followup: str) -> set[str]:
    snapshot = graph.snapshot()
    return {
        key for key, name in zip(snapshot.keys, snapshot.names, strict=True) if name in followup
    }


def test_drift_gives_new_followups_that_name_no_covered_entity(tmp_path: Path) -> None:
    graph = make_graph(tmp_path)
    result = graph.drift("Roald Amundsen expedition", k=3)
    assert result.hits and 2 <= len(result.followups) <= 5
    assert len(set(result.followups)) == len(result.followups)
    covered = set(result.covered)
    assert "roald amundsen" in covered
    assert all(set(hit.provenance.nodes) <= covered for hit in result.hits)
    for followup in result.followups:
        assert followup.startswith("roald amundsen expedition ")
        named = _named_ids(graph, followup.removeprefix("roald amundsen expedition "))
        assert named and not named & covered and named <= POLAR_ENTITIES


def test_threading_covered_entities_moves_drift_to_new_evidence(tmp_path: Path) -> None:
    graph = make_graph(tmp_path)
    first = graph.drift("Roald Amundsen expedition", k=2)
    second = graph.drift("Roald Amundsen expedition", k=2, covered_entity_ids=first.covered)
    assert {h.id for h in second.hits}.isdisjoint({h.id for h in first.hits})
    assert all(not set(h.provenance.nodes) <= set(first.covered) for h in second.hits)
    assert set(second.covered) > set(first.covered)
    assert set(second.followups).isdisjoint(first.followups) or not second.followups
    for followup in second.followups:
        named = _named_ids(graph, followup.removeprefix("roald amundsen expedition "))
        assert named and not named & set(second.covered)


def test_a_followup_is_never_the_query_itself(tmp_path: Path) -> None:
    graph = make_graph(tmp_path)
    result = graph.drift("Morgedal", k=1)
    assert "Morgedal" not in result.followups and result.followups


def test_drift_without_any_seed_returns_nothing(tmp_path: Path) -> None:
    graph = make_graph(tmp_path)
    result = graph.drift("quantum chromodynamics")
    assert result.hits == () and result.followups == () and result.covered == ()
