from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from graph_support import CORPUS, LAB_ENTITIES, POLAR_ENTITIES, make_graph

from rcpkit.engine.graph import CommunityInfo, GraphConfig, KnowledgeGraph


def _all(graph: KnowledgeGraph, level: int | None = None) -> list[CommunityInfo]:
    return list(graph.communities(level, 0, 1000).communities)


@pytest.mark.parametrize("method", ["leiden", "louvain"])
def test_no_community_mixes_the_two_clusters(tmp_path: Path, method: str) -> None:
    pytest.importorskip("igraph" if method == "leiden" else "networkx")
    graph = make_graph(tmp_path, config=GraphConfig(community_method=method))
    communities = _all(graph)
    assert communities
    for community in communities:
        members = set(community.members)
        assert members <= POLAR_ENTITIES or members <= LAB_ENTITIES, community.id
        assert community.size == len(members) >= 2


def test_levels_nest_and_level_zero_is_the_finest(tmp_path: Path) -> None:
    graph = make_graph(tmp_path)
    levels = sorted({c.level for c in _all(graph)})
    assert levels[0] == 0 and len(levels) >= 2
    by_id = {c.id: c for c in _all(graph)}
    for community in _all(graph):
        if community.parent is not None:
            parent = by_id[community.parent]
            assert parent.level == community.level + 1
            assert set(community.members) <= set(parent.members)
    counts = [len(_all(graph, level)) for level in levels]
    assert counts == sorted(counts, reverse=True)


def test_a_community_has_a_title_of_central_members_and_an_extractive_summary(
    tmp_path: Path,
) -> None:
    graph = make_graph(tmp_path)
    sentences = {text.strip() for _, _, chunk in CORPUS for text in chunk.split(". ")}
    for community in _all(graph):
        names = [e.name for e in graph.entities(list(community.members[:3]))]
        assert community.title == ", ".join(names)
        assert community.summary and len(community.summary) <= GraphConfig().summary_chars
        assert any(s.rstrip(".") in community.summary for s in sentences)
        assert community.chunk_keys


def test_summaries_do_not_repeat_a_sentence(tmp_path: Path) -> None:
    graph = make_graph(tmp_path, [*CORPUS, (21, "dup", CORPUS[0][2])])
    for community in _all(graph):
        first = "Roald Amundsen led the expedition to the South Pole aboard the Fram."
        assert community.summary.count(first) <= 1


def test_communities_are_recomputed_lazily_after_a_write(tmp_path: Path) -> None:
    graph = make_graph(tmp_path)
    _all(graph)
    assert not graph.communities_stale
    graph.add_chunks([(31, "new", "Fridtjof Nansen and Hjalmar Johansen crossed Greenland.")])
    assert graph.communities_stale
    members = {m for c in _all(graph) for m in c.members}
    assert "fridtjof nansen" in members and not graph.communities_stale


def test_communities_are_the_same_whatever_the_insertion_order(tmp_path: Path) -> None:
    first = _all(make_graph(tmp_path / "a"))
    second = make_graph(tmp_path / "b", list(reversed(CORPUS)))
    assert _all(second) == first


def test_communities_are_the_same_in_another_process(tmp_path: Path) -> None:
    local = [(c.id, c.members, c.summary) for c in _all(make_graph(tmp_path / "here"))]
    script = (
        "import json, sys; from pathlib import Path; from graph_support import make_graph;"
        "g = make_graph(Path(sys.argv[1]));"
        "print(json.dumps([(c.id, c.members, c.summary) for c in g.communities(None, 0, 999)"
        ".communities]))"
    )
    environment = {**os.environ, "PYTHONHASHSEED": "12345"}
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "there")],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        cwd=Path(__file__).parent,
        env=environment,
    )
    assert [(row[0], tuple(row[1]), row[2]) for row in json.loads(done.stdout)] == local


def test_pages_of_communities_are_disjoint_and_complete(tmp_path: Path) -> None:
    graph = make_graph(tmp_path)
    everything = _all(graph)
    seen: list[str] = []
    offset: int | None = 0
    while offset is not None:
        page = graph.communities(None, offset, 2)
        assert len(page.communities) <= 2 and page.total == len(everything)
        seen.extend(c.id for c in page.communities)
        offset = page.next_offset
    assert seen == [c.id for c in everything]
    assert len(set(seen)) == len(seen)


def test_a_page_filtered_by_level_holds_only_that_level(tmp_path: Path) -> None:
    graph = make_graph(tmp_path)
    page = graph.communities(1, 0, 100)
    assert page.communities and {c.level for c in page.communities} == {1}
    assert graph.communities(9).communities == ()


def test_an_empty_graph_has_no_communities(tmp_path: Path) -> None:
    graph = make_graph(tmp_path, [])
    assert graph.communities() == graph.communities(0, 0, 10)
    assert graph.communities().total == 0
    assert graph.global_search("anything").communities == ()


def test_level_zero_communities_respect_the_size_bound(tmp_path: Path) -> None:
    bounded = make_graph(tmp_path / "a", config=GraphConfig(max_community_size=4))
    assert all(c.size <= 4 for c in _all(bounded, 0))
    assert len(_all(bounded, 0)) > len(_all(make_graph(tmp_path / "b"), 0))
