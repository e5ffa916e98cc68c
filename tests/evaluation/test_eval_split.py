"""The fixed dev / held-out split of a collection's queries (issue 16)."""

from __future__ import annotations

import pytest

from rcpkit.evaluation.dataset import CorpusDocument, Dataset
from rcpkit.evaluation.split import split_of, split_queries


def test_the_split_of_a_query_id_is_fixed_for_ever() -> None:
    # Pinned: a change here would silently move queries between the halves.
    assert [split_of(q) for q in ("1", "2", "3", "4", "5", "6")] == [
        "heldout", "dev", "dev", "dev", "heldout", "heldout",
    ]  # fmt: skip


def test_the_halves_are_disjoint_cover_every_query_and_keep_the_order() -> None:
    ids = [str(i) for i in range(1, 401)]
    dev, held = split_queries(ids, "dev"), split_queries(ids, "heldout")
    assert not set(dev) & set(held)
    assert sorted(dev + held, key=int) == ids
    assert dev == sorted(dev, key=int)
    assert 150 < len(dev) < 250  # a hash, not a cut at the middle
    assert split_queries(ids, "all") == ids


def test_an_unknown_half_is_a_usage_error() -> None:
    with pytest.raises(ValueError, match="dev, heldout"):
        split_queries(["1"], "test")


def test_a_dataset_half_keeps_the_corpus_and_only_its_queries() -> None:
    corpus = [CorpusDocument("d", "t", "x", {})]
    queries = {q: f"query {q}" for q in ("1", "2", "3")}
    dataset = Dataset("c", corpus, queries, {q: {"d": 1} for q in queries})
    dev = dataset.half("dev")
    assert list(dev.queries) == ["2", "3"] and list(dev.qrels) == ["2", "3"]
    assert dev.corpus == corpus
    assert dataset.half("all") is dataset


def test_eval_takes_a_half_with_split_and_the_qrels_file_with_qrels() -> None:
    import argparse

    from rcpkit.cli.eval_options import add_arguments

    parser = argparse.ArgumentParser(exit_on_error=False)
    add_arguments(parser)
    args = parser.parse_args(["data", "--split", "heldout", "--qrels", "dev"])
    assert (args.split, args.qrels) == ("heldout", "dev")
    assert parser.parse_args(["data"]).split == "all"
    with pytest.raises(argparse.ArgumentError):
        parser.parse_args(["data", "--split", "test"])
