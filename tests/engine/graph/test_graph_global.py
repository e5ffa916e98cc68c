from __future__ import annotations

from pathlib import Path

from graph_support import LAB_ENTITIES, POLAR_ENTITIES, CountingEmbed, make_graph


def test_a_chemistry_query_returns_a_laboratory_community_first(tmp_path: Path) -> None:
    graph = make_graph(tmp_path)
    result = graph.global_search("Who measured radium samples in the laboratory?", k=3)
    assert result.level == 0
    top = result.communities[0]
    assert set(top.community.members) <= LAB_ENTITIES
    assert top.score > 0 and top.lexical > 0 and top.dense == 0
    assert "Radium" in result.summary


def test_an_expedition_query_returns_an_expedition_community_first(tmp_path: Path) -> None:
    graph = make_graph(tmp_path)
    for level in (0, 1):
        result = graph.global_search("the expedition dogs at the South Pole", k=2, level=level)
        assert set(result.communities[0].community.members) <= POLAR_ENTITIES
        assert result.level == level


def test_the_reduced_summary_is_sentences_of_the_chosen_communities(tmp_path: Path) -> None:
    graph = make_graph(tmp_path)
    result = graph.global_search("Marie Curie radium", k=2)
    summaries = " ".join(scored.community.summary for scored in result.communities)
    sentences = [s for s in result.summary.split(". ") if s]
    assert sentences and all(s.rstrip(".") in summaries for s in sentences)
    assert len(result.summary) <= 1200


def test_scores_are_ranked_and_unrelated_communities_are_left_out(tmp_path: Path) -> None:
    graph = make_graph(tmp_path)
    result = graph.global_search("Radium Uranium Electrometer", k=10)
    scores = [scored.score for scored in result.communities]
    assert scores == sorted(scores, reverse=True)
    assert all(set(s.community.members) <= LAB_ENTITIES for s in result.communities)


def test_a_level_above_the_top_one_is_served_from_the_top_level(tmp_path: Path) -> None:
    graph = make_graph(tmp_path)
    top = max(c.level for c in graph.communities(None, 0, 100).communities)
    assert graph.global_search("radium", level=top + 5).level == top


def test_dense_scores_join_the_lexical_ones_and_summary_vectors_are_cached(tmp_path: Path) -> None:
    graph = make_graph(tmp_path)
    embed = CountingEmbed()
    result = graph.global_search("radium laboratory", k=2, embed=embed)
    assert result.communities[0].dense > 0
    assert set(result.communities[0].community.members) <= LAB_ENTITIES
    embed.texts.clear()
    graph.global_search("radium laboratory", k=2, embed=embed)
    assert embed.texts == ["radium laboratory"]


def test_the_batch_form_equals_single_queries(tmp_path: Path) -> None:
    graph = make_graph(tmp_path)
    queries = ["radium", "South Pole"]
    assert graph.global_search_many(queries, k=2) == [graph.global_search(q, k=2) for q in queries]
