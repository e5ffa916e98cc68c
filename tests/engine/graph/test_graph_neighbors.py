from __future__ import annotations

from pathlib import Path

import pytest
from graph_support import make_graph


def test_neighbors_respect_hops(tmp_path: Path) -> None:
    graph = make_graph(tmp_path)
    one = graph.neighbors(["olav bjaaland"], hops=1)
    two = graph.neighbors(["olav bjaaland"], hops=2)
    near = {"olav bjaaland", "roald amundsen", "south pole", "fram", "morgedal"}
    assert {n.id for n in one.nodes} == near
    assert max(n.hops for n in one.nodes) == 1
    assert {"telemark", "sondre norheim", "helmer hanssen"} <= {n.id for n in two.nodes}
    assert max(n.hops for n in two.nodes) == 2
    assert {n.id: n.hops for n in two.nodes}["olav bjaaland"] == 0


def test_zero_hops_is_just_the_seeds(tmp_path: Path) -> None:
    graph = make_graph(tmp_path)
    result = graph.neighbors(["radium", "uranium"], hops=0)
    assert {n.id for n in result.nodes} == {"radium", "uranium"}
    assert [(e.src, e.dst) for e in result.edges] == [("radium", "uranium")]


def test_neighbor_edges_join_returned_nodes_strongest_first(tmp_path: Path) -> None:
    graph = make_graph(tmp_path)
    result = graph.neighbors(["pierre curie"], hops=1)
    ids = {n.id for n in result.nodes}
    assert result.edges and all(e.src in ids and e.dst in ids for e in result.edges)
    weights = [e.weight for e in result.edges]
    assert weights == sorted(weights, reverse=True) and weights[-1] > 0
    scores = [n.score for n in result.nodes]
    assert scores == sorted(scores, reverse=True) and result.nodes[0].id == "pierre curie"


def test_unknown_seeds_are_ignored_and_hops_are_bounded(tmp_path: Path) -> None:
    graph = make_graph(tmp_path)
    assert graph.neighbors(["nobody"]).nodes == ()
    with pytest.raises(ValueError, match="hops"):
        graph.neighbors(["radium"], hops=99)


def test_limit_caps_the_nodes(tmp_path: Path) -> None:
    graph = make_graph(tmp_path)
    assert len(graph.neighbors(["roald amundsen"], hops=3, limit=3).nodes) == 3
