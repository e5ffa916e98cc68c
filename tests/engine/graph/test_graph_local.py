from __future__ import annotations

from pathlib import Path

import pytest
from graph_support import LAB, LAB_ENTITIES, POLAR_ENTITIES, CountingEmbed, make_graph

from rcpkit.engine.graph import LOCAL_UNITS, GraphConfig, KnowledgeGraph, RegexExtractor


def test_local_search_finds_the_chunk_two_hops_away_and_reports_the_path(tmp_path: Path) -> None:
    graph = make_graph(tmp_path)
    result = graph.local("Where did Roald Amundsen's skier grow up?", k=10, hops=2, unit="chunk")
    by_id = {hit.id: hit for hit in result.hits}
    assert "polar-3" in by_id  # names only Morgedal, Telemark and Sondre Norheim
    far = by_id["polar-3"]
    assert far.provenance.path == ("roald amundsen", "olav bjaaland", "morgedal")
    assert [(e.src, e.dst) for e in far.provenance.edges] == [
        ("roald amundsen", "olav bjaaland"),
        ("olav bjaaland", "morgedal"),
    ]
    assert far.chunk_keys == (3,)
    assert result.hits[0].id in {"polar-1", "polar-5"}  # chunks naming the seed come first


def test_one_hop_does_not_reach_the_chunk_two_hops_away(tmp_path: Path) -> None:
    graph = make_graph(tmp_path)
    result = graph.local("Roald Amundsen", k=20, hops=1, unit="chunk")
    assert "polar-3" not in {hit.id for hit in result.hits}


def test_local_search_never_leaves_the_seed_cluster(tmp_path: Path) -> None:
    graph = make_graph(tmp_path)
    for unit in LOCAL_UNITS:
        for hit in graph.local("Marie Curie", k=20, hops=3, unit=unit).hits:
            assert set(hit.provenance.nodes) <= LAB_ENTITIES, (unit, hit.id)


def test_a_surname_anchors_on_the_full_name(tmp_path: Path) -> None:
    graph = make_graph(tmp_path)
    result = graph.local("What did Amundsen do?", unit="node")
    assert [seed.id for seed in result.seeds] == ["roald amundsen"]
    assert result.hits[0].id == "roald amundsen"


def test_node_results_carry_a_path_from_the_seed_and_backing_chunks(tmp_path: Path) -> None:
    graph = make_graph(tmp_path)
    hits = graph.local("Olav Bjaaland", k=10, hops=2, unit="node").hits
    by_id = {hit.id: hit for hit in hits}
    assert by_id["olav bjaaland"].provenance.path == ("olav bjaaland",)
    assert by_id["morgedal"].provenance.path == ("olav bjaaland", "morgedal")
    assert set(by_id["morgedal"].chunk_keys) <= {2, 3} and by_id["morgedal"].chunk_keys
    assert [hit.score for hit in hits] == sorted((hit.score for hit in hits), reverse=True)


def test_triplets_are_co_occurrence_edges_backed_by_shared_chunks(tmp_path: Path) -> None:
    graph = make_graph(tmp_path)
    hits = graph.local("Pierre Curie", k=5, hops=1, unit="triplet").hits
    assert hits and all(hit.relation == "co-occurs" for hit in hits)
    top = hits[0]
    src, relation, dst = top.id.split("|")
    assert relation == "co-occurs" and "pierre curie" in (src, dst)
    assert top.provenance.edges[-1].weight > 0
    for hit in hits:
        a, _, b = hit.id.split("|")
        assert all(a in _names(graph, key) and b in _names(graph, key) for key in hit.chunk_keys)


def _names(graph: KnowledgeGraph, chunk_key: int) -> set[str]:
    snapshot = graph.snapshot()
    position = int(list(snapshot.chunk_keys).index(chunk_key))
    return {snapshot.keys[int(n)] for n in snapshot.chunk_entities.row(position)[0]}


def test_paths_start_at_a_seed_and_chain_real_edges(tmp_path: Path) -> None:
    graph = make_graph(tmp_path)
    hits = graph.local("Roald Amundsen", k=20, hops=3, unit="path").hits
    paths = {hit.provenance.path for hit in hits}
    assert ("roald amundsen", "olav bjaaland", "morgedal", "telemark") in paths
    snapshot = graph.snapshot()
    for hit in hits:
        assert hit.provenance.path[0] == "roald amundsen"
        assert 2 <= len(hit.provenance.path) <= 4
        for edge in hit.provenance.edges:
            a, b = snapshot.index_of[edge.src], snapshot.index_of[edge.dst]
            assert snapshot.edge_weight_between(a, b) == pytest.approx(edge.weight)


def test_the_subgraph_unit_is_one_induced_neighbourhood(tmp_path: Path) -> None:
    graph = make_graph(tmp_path)
    (hit,) = graph.local("Helmer Hanssen", k=5, hops=2, unit="subgraph").hits
    nodes = set(hit.provenance.nodes)
    assert "helmer hanssen" in nodes and len(nodes) == 5 and nodes <= POLAR_ENTITIES
    assert hit.provenance.edges
    assert all(e.src in nodes and e.dst in nodes for e in hit.provenance.edges)
    assert hit.chunk_keys


def test_a_query_naming_no_entity_finds_nothing_without_an_embedder(tmp_path: Path) -> None:
    graph = make_graph(tmp_path)
    result = graph.local("quantum chromodynamics", unit="chunk")
    assert result.hits == () and result.seeds == ()


def test_dense_name_similarity_adds_seeds_and_caches_name_vectors(tmp_path: Path) -> None:
    config = GraphConfig(min_seed_similarity=0.3)  # the hashing model's scale
    graph = make_graph(tmp_path, config=config)
    embed = CountingEmbed()
    result = graph.local("radium chemistry", k=3, unit="node", embed=embed)
    assert {seed.id for seed in result.seeds if seed.match == "exact"} == {"radium"}
    assert {seed.id for seed in result.seeds if seed.match == "dense"} == {"radium institute"}
    assert all(hit.id in LAB_ENTITIES for hit in result.hits)
    graph.close()
    again = CountingEmbed()
    with KnowledgeGraph(tmp_path / "graph.sqlite3", RegexExtractor(), config) as reopened:
        reopened.local("radium chemistry", k=3, unit="node", embed=again)
    assert again.texts == ["radium chemistry"]  # no entity name re-embedded


def test_hops_beyond_the_cap_are_refused(tmp_path: Path) -> None:
    graph = make_graph(tmp_path, config=GraphConfig(max_hops=3))
    with pytest.raises(ValueError, match="hops"):
        graph.local("Roald Amundsen", hops=4)
    with pytest.raises(ValueError, match="hops"):
        graph.local("Roald Amundsen", hops=-1)


def test_k_is_clamped_to_max_k(tmp_path: Path) -> None:
    graph = make_graph(tmp_path, config=GraphConfig(max_k=2))
    assert len(graph.local("Roald Amundsen", k=50, unit="node").hits) == 2


def test_the_batch_form_equals_single_queries(tmp_path: Path) -> None:
    graph = make_graph(tmp_path)
    queries = ["Roald Amundsen", "Pierre Curie"]
    assert graph.local_many(queries, k=4) == [graph.local(q, k=4) for q in queries]


def test_another_embedding_dimension_replaces_every_cached_name_vector(tmp_path: Path) -> None:
    graph = make_graph(tmp_path)
    graph.local("radium", embed=CountingEmbed(256))
    smaller = CountingEmbed(128)
    graph.local("radium", embed=smaller)
    assert set(graph.snapshot().names) <= set(smaller.texts)
    assert graph.embed_entities(smaller) == 0


def test_results_rank_specific_entities_above_hubs_of_equal_reach(tmp_path: Path) -> None:
    hub = [(40 + i, f"hub-{i}", f"Radium was sold in Shop {i}.") for i in range(8)]
    graph = make_graph(tmp_path, [*LAB, *hub])
    ranked = [hit.id for hit in graph.local("Electrometer", k=20, hops=2, unit="node").hits]
    assert ranked.index("pierre curie") < ranked.index("radium")
