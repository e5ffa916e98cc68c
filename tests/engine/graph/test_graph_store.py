from __future__ import annotations

from pathlib import Path

import pytest
from graph_support import CORPUS, LAB_ENTITIES, POLAR_ENTITIES, make_graph

from rcpkit.engine.graph import KnowledgeGraph, RegexExtractor


def test_entities_are_the_capitalised_names_of_both_clusters(tmp_path: Path) -> None:
    graph = make_graph(tmp_path)
    assert set(graph.snapshot().keys) == POLAR_ENTITIES | LAB_ENTITIES


def test_an_entity_keeps_its_display_name_type_and_mention_count(tmp_path: Path) -> None:
    graph = make_graph(tmp_path)
    (amundsen,) = graph.entities(["roald amundsen", "nobody"])
    assert (amundsen.name, amundsen.label, amundsen.mentions) == ("Roald Amundsen", "NAME", 3)


def test_mentions_keep_chunk_keys_and_sentence_spans(tmp_path: Path) -> None:
    graph = make_graph(tmp_path)
    text = {key: text for key, _, text in CORPUS}
    mentions = graph.mentions("olav bjaaland")
    assert [(chunk, sentence) for chunk, sentence, _, _ in mentions] == [(1, 1), (2, 0)]
    assert all(text[chunk][start:end] == "Olav Bjaaland" for chunk, _, start, end in mentions)


def test_sentence_cooccurrence_outweighs_chunk_cooccurrence(tmp_path: Path) -> None:
    snapshot = make_graph(tmp_path).snapshot()
    index = snapshot.index_of
    same_sentence = snapshot.edge_weight_between(index["roald amundsen"], index["olav bjaaland"])
    same_chunk = snapshot.edge_weight_between(index["fram"], index["olav bjaaland"])
    assert same_sentence > same_chunk > 0
    assert snapshot.edge_weight_between(index["roald amundsen"], index["radium"]) == 0


def test_removing_a_chunk_removes_its_mentions_and_the_edges_only_it_gave(tmp_path: Path) -> None:
    graph = make_graph(tmp_path)
    assert graph.remove_chunks([2]) == 1
    snapshot = graph.snapshot()
    index = snapshot.index_of
    assert [m[0] for m in graph.mentions("olav bjaaland")] == [1]
    assert snapshot.edge_weight_between(index["olav bjaaland"], index["morgedal"]) == 0
    assert snapshot.edge_weight_between(index["roald amundsen"], index["olav bjaaland"]) > 0


def test_an_entity_with_no_mentions_left_disappears(tmp_path: Path) -> None:
    graph = make_graph(tmp_path)
    graph.remove_chunks([2, 3])
    assert "morgedal" not in graph.snapshot().index_of
    assert graph.mentions("morgedal") == []
    assert graph.entities(["morgedal"]) == []


def test_removing_every_chunk_leaves_an_empty_graph(tmp_path: Path) -> None:
    graph = make_graph(tmp_path)
    graph.remove_chunks([key for key, _, _ in CORPUS])
    snapshot = graph.snapshot()
    assert snapshot.n_nodes == 0 and len(snapshot.edge_src) == 0
    assert graph.store.read("SELECT COUNT(*) FROM edges") == [(0,)]


def test_adding_then_removing_chunks_restores_the_earlier_graph(tmp_path: Path) -> None:
    graph = make_graph(tmp_path)
    before = graph.snapshot()
    graph.add_chunks([(99, "extra", "Roald Amundsen met Fridtjof Nansen in Oslo.")])
    assert "fridtjof nansen" in graph.snapshot().index_of
    graph.remove_chunks([99])
    after = graph.snapshot()
    assert after.keys == before.keys
    assert after.edge_src.tolist() == before.edge_src.tolist()
    assert after.edge_weight.tolist() == before.edge_weight.tolist()


def test_adding_a_chunk_key_again_replaces_the_chunk(tmp_path: Path) -> None:
    graph = make_graph(tmp_path)
    graph.add_chunks([(3, "polar-3", "Morgedal lies in Telemark.")])
    assert "sondre norheim" in graph.snapshot().index_of  # still named by chunk 6
    assert [m[0] for m in graph.mentions("sondre norheim")] == [6]
    assert graph.store.read("SELECT COUNT(*) FROM chunks") == [(len(CORPUS),)]


def test_removing_unknown_chunks_changes_nothing(tmp_path: Path) -> None:
    graph = make_graph(tmp_path)
    version = graph.version
    assert graph.remove_chunks([404]) == 0
    assert graph.version == version


def test_a_reopened_graph_is_the_same_graph(tmp_path: Path) -> None:
    graph = make_graph(tmp_path)
    before = graph.snapshot()
    communities = graph.communities()
    graph.close()
    with KnowledgeGraph(tmp_path / "graph.sqlite3", RegexExtractor()) as reopened:
        after = reopened.snapshot()
        assert (after.keys, after.names, after.labels) == (before.keys, before.names, before.labels)
        assert after.edge_weight.tolist() == before.edge_weight.tolist()
        assert not reopened.communities_stale
        assert reopened.communities() == communities


def test_a_graph_refuses_an_extractor_it_was_not_built_with(tmp_path: Path) -> None:
    make_graph(tmp_path).close()
    with pytest.raises(ValueError, match="extractor"):
        KnowledgeGraph(tmp_path / "graph.sqlite3", RegexExtractor(min_bigram_texts=5))


def test_a_failed_write_leaves_the_previous_version(tmp_path: Path) -> None:
    graph = make_graph(tmp_path)
    version, keys = graph.version, graph.snapshot().keys
    with pytest.raises(ValueError, match="zip"):
        graph.store.write_chunks([(50, "x", "New Name here.")], [])
    assert graph.version == version and graph.snapshot().keys == keys
