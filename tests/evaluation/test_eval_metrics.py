"""The measures against values computed by hand on a tiny run, through ir-measures."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from eval_support import write_dataset

from rcpkit.evaluation import load_dataset, score_run
from rcpkit.evaluation.metrics import ranked_run

QRELS = {"q": {"a": 2, "b": 1, "c": 0, "d": 1}, "r": {"z": 3}}


def test_ndcg_recall_mrr_and_map_match_hand_computed_values() -> None:
    run = ranked_run({"q": ["x", "a", "c", "b"], "r": ["y", "z"]})
    scores = score_run(QRELS, run)
    # q: DCG = 2/log2(3) + 1/log2(5); ideal = 2/log2(2) + 1/log2(3) + 1/log2(4).
    ndcg_q = (2 / math.log2(3) + 1 / math.log2(5)) / (2 + 1 / math.log2(3) + 1 / math.log2(4))
    ndcg_r = (3 / math.log2(3)) / 3
    assert scores.per_query["q"]["nDCG@10"] == pytest.approx(ndcg_q)
    assert scores.per_query["r"]["nDCG@10"] == pytest.approx(ndcg_r)
    assert scores["nDCG@10"] == pytest.approx((ndcg_q + ndcg_r) / 2)
    assert scores.per_query["q"]["R@50"] == pytest.approx(2 / 3)  # a, b of a, b, d
    assert scores.per_query["q"]["RR@10"] == pytest.approx(1 / 2)
    # AP(q) = (1/2 + 2/4) / 3 relevant; AP(r) = 1/2.
    assert scores.per_query["q"]["AP"] == pytest.approx((1 / 2 + 2 / 4) / 3)
    assert scores["AP"] == pytest.approx(((1 / 2 + 2 / 4) / 3 + 1 / 2) / 2)


def test_a_query_the_run_misses_counts_as_zero_not_as_absent() -> None:
    scores = score_run(QRELS, ranked_run({"r": ["z"]}))
    assert scores.per_query["q"] == dict.fromkeys(scores.aggregate, 0.0)
    assert scores["nDCG@10"] == pytest.approx(0.5)  # (0 + 1) / 2 queries


def test_ranked_runs_keep_the_servers_order_and_drop_repeats() -> None:
    run = ranked_run({"q": ["b", "a", "b", "d"]})
    assert sorted(run["q"], key=run["q"].__getitem__, reverse=True) == ["b", "a", "d"]
    # Ties in the servers' own scores would let trec_eval reorder by id; ranks cannot tie.
    assert score_run(QRELS, ranked_run({"q": ["d", "a"]})).per_query["q"]["RR@10"] == 1.0


def test_the_loader_keeps_judged_queries_only_and_reads_graded_qrels(tmp_path: Path) -> None:
    dataset = load_dataset(write_dataset(tmp_path / "tiny"))
    assert dataset.name == "tiny"
    assert "unjudged" not in dataset.queries
    assert len(dataset.queries) == 6
    assert dataset.qrels["q1"]["wing0"] == 2
    assert [d.id for d in dataset.corpus if d.empty] == ["empty"]
    assert list(dataset.subset(2).queries) == ["q1", "q2"]
    assert len(dataset.subset(2).corpus) == len(dataset.corpus)


def test_a_folder_that_is_not_beir_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"not a BEIR-layout dataset: corpus.jsonl is missing"):
        load_dataset(tmp_path)
    write_dataset(tmp_path / "bad")
    (tmp_path / "bad" / "corpus.jsonl").write_text('{"_id": "a"}\nnot json\n')
    with pytest.raises(ValueError, match=r"corpus.jsonl:2: not JSON"):
        load_dataset(tmp_path / "bad")


def test_a_query_with_no_relevant_document_is_not_judged_and_does_not_dilute_the_mean(
    tmp_path: Path,
) -> None:
    data = write_dataset(tmp_path / "tiny")
    with (data / "qrels" / "test.tsv").open("a") as qrels:
        qrels.write("unjudged\twing0\t0\nunjudged\twing1\t-1\n")  # judged, nothing relevant
    dataset = load_dataset(data)
    assert "unjudged" not in dataset.queries  # no run can score above 0 on it
    assert len(dataset.queries) == 6


def test_malformed_qrels_and_queries_are_errors_that_name_the_file_and_line(
    tmp_path: Path,
) -> None:
    data = write_dataset(tmp_path / "tiny")
    qrels = data / "qrels" / "test.tsv"
    body = qrels.read_text().split("\n", 1)[1]
    qrels.write_text(body)  # TREC-style: no header row
    with pytest.raises(ValueError, match=r"test.tsv:1: .*query-id\tcorpus-id\tscore"):
        load_dataset(data)
    qrels.write_text("query-id\tcorpus-id\tscore\nq1\twing0\thigh\n")
    with pytest.raises(ValueError, match=r"test.tsv:2: the score 'high' is not an integer"):
        load_dataset(data)
    qrels.write_text("query-id\tcorpus-id\tscore\nq1\twing0\n")
    with pytest.raises(ValueError, match=r"test.tsv:2: "):
        load_dataset(data)
    qrels.write_text("query-id\tcorpus-id\tscore\nq1\twing0\t1\n")
    (data / "queries.jsonl").write_text('{"_id": "q1"}\n')
    with pytest.raises(ValueError, match=r"queries.jsonl:1: a query needs a text"):
        load_dataset(data)


def test_the_bm25_baseline_ranks_only_documents_that_match_the_query(tmp_path: Path) -> None:
    from rcpkit.evaluation.baseline import bm25_baseline

    data = write_dataset(tmp_path / "tiny")
    (data / "queries.jsonl").write_text(
        '{"_id": "q1", "text": "zebra quokka"}\n{"_id": "q2", "text": "heat"}\n'
    )
    run = bm25_baseline(load_dataset(data), depth=100)
    # Score-0 documents used to fill the list in index order: free, arbitrary recall.
    assert run["q1"] == {}
    assert sorted(run["q2"]) == ["heat0", "heat1", "heat2", "heat3"]


def test_a_split_that_judges_none_of_the_queries_is_a_clear_error(tmp_path: Path) -> None:
    data = write_dataset(tmp_path / "tiny")
    (data / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nQ-1\twing0\t1\n")
    with pytest.raises(ValueError, match=r"no query of .*queries.jsonl has a relevant document"):
        load_dataset(data)
