"""Table, JSON record, bar chart and the per-query comparison of two runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rcpkit.evaluation.metrics import ranked_run, score_run
from rcpkit.evaluation.report import (
    Evaluation,
    Row,
    compare,
    load_evaluation,
    plot,
    render_comparison,
    render_table,
    to_json,
)

QRELS = {"1": {"a": 1}, "2": {"b": 1}, "3": {"c": 1}}


def row(key: str, ranking: dict[str, list[str]]) -> Row:
    return Row(key, f"run {key}", score_run(QRELS, ranked_run(ranking)), {"mode": key},
               [5.0, 7.0, 9.0], 0, ranking)  # fmt: skip


def evaluation() -> Evaluation:
    base = row("bm25-baseline", {"1": ["x", "a"], "2": ["b"], "3": ["x"]})
    better = row("default", {"1": ["a"], "2": ["b"], "3": ["x", "c"]})
    worse = row("dense", {"1": ["x", "y", "a"], "2": ["x"], "3": ["x"]})
    return Evaluation("tiny", 3, 3, "test 1.0", "7", 0, base, [better, worse], "BM25")


def test_the_table_gives_every_measure_and_the_ratio_to_the_baseline() -> None:
    table = render_table(evaluation())
    assert "tiny: 3 documents, 3 judged queries; test 1.0; indexVersion 7, seed 0" in table
    lines = table.splitlines()
    assert lines[2].startswith("| run | nDCG@10 | Recall@50 | Recall@100 | MRR@10 | MAP |")
    assert lines[4].startswith("| run bm25-baseline |") and "| 1.000× |" in lines[4]
    default = evaluation().rows[0]
    ratio = default.scores["nDCG@10"] / evaluation().baseline.scores["nDCG@10"]
    assert f"| {ratio:.3f}× |" in lines[5] and lines[5].endswith("| 7.0 |")
    assert "run dense" in render_table(evaluation(), markdown=False)


def test_the_json_record_round_trips_into_a_comparison(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_text(json.dumps(to_json(evaluation())))
    record = load_evaluation(path)
    assert record["runs"][0]["perQuery"]["3"]["RR@10"] == 0.5
    assert record["runs"][0]["ranking"]["1"] == ["a"]
    first, second, changes = compare((record, "bm25-baseline"), (record, None))
    assert (first, second) == ("run bm25-baseline", "run default")
    # Largest change first: q3 0 → 1/log2(3), q1 1/log2(3) → 1, q2 unchanged.
    assert [(c.query, round(c.delta, 4)) for c in changes] == [
        ("3", 0.6309),
        ("1", 0.3691),
        ("2", 0.0),
    ]
    text = render_comparison((first, second), changes)
    assert "B helped 2, hurt 0, left 1 unchanged" in text
    assert "query      3  0.0000 → 0.6309  (+0.6309)" in text
    worse = render_comparison(*_swap(compare((record, None), (record, "dense"))))
    assert "B helped 0, hurt 3" in worse


def _swap(result: tuple[str, str, list]) -> tuple[tuple[str, str], list]:  # type: ignore[type-arg]
    return (result[0], result[1]), result[2]


def test_comparing_names_a_missing_run_or_file_clearly(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_text(json.dumps(to_json(evaluation())))
    with pytest.raises(ValueError, match=r"A has no run 'hybrid'; it has: bm25-baseline, "):
        compare((load_evaluation(path), "hybrid"), (load_evaluation(path), None))
    (tmp_path / "junk.json").write_text("[]")
    with pytest.raises(ValueError, match=r"not an rcpkit eval JSON file"):
        load_evaluation(tmp_path / "junk.json")


def test_the_bar_chart_is_a_png(tmp_path: Path) -> None:
    plot(evaluation(), tmp_path / "chart.png")
    assert (tmp_path / "chart.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_compare_reads_file_colon_run_when_the_path_itself_holds_colons(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from rcpkit.cli import main

    folder = tmp_path / "runs:2026-12-01T10:00"
    folder.mkdir()
    record = folder / "a.json"
    record.write_text(json.dumps(to_json(evaluation())))
    assert main(["eval", "--compare", f"{record}:default", f"{record}:dense"]) == 0
    assert "A = run default, B = run dense" in capsys.readouterr().out
    assert main(["eval", "--compare", str(record), f"{record}:nope"]) == 2
    assert "B has no run 'nope'" in capsys.readouterr().err


def test_a_baseline_that_scores_zero_gives_no_ratio_and_still_valid_json() -> None:
    base = row("bm25-baseline", {"1": ["x"], "2": ["y"], "3": ["z"]})  # nDCG@10 = 0
    found = row("default", {"1": ["a"], "2": ["b"], "3": ["c"]})
    zero = Evaluation("tiny", 3, 3, "test 1.0", None, 0, base, [found], "BM25")
    record = json.dumps(to_json(zero), allow_nan=False)  # NaN is not JSON
    assert json.loads(record)["runs"][0]["ratioToBaseline"] is None
    assert "| run default | 1.0000 |" in render_table(zero)
    assert "nan" not in render_table(zero)


def test_the_table_and_record_give_the_ratio_on_each_half_of_the_fixed_split() -> None:
    # Queries 2 and 3 are dev, 1 is held-out (rcpkit.evaluation.split).
    done = evaluation()
    table = render_table(done)
    assert "dev ÷ BM25 | held-out ÷ BM25" in table
    assert (
        "query halves (rcpkit.evaluation.split, by SHA-256 of the id): dev 2, held-out 1" in table
    )
    default = next(run for run in to_json(done)["runs"] if run["key"] == "default")
    base = done.baseline.scores.per_query
    mine = done.rows[0].scores.per_query
    dev = (mine["2"]["nDCG@10"] + mine["3"]["nDCG@10"]) / (
        base["2"]["nDCG@10"] + base["3"]["nDCG@10"]
    )
    assert default["ratioByHalf"]["dev"] == pytest.approx(dev)
    assert default["ratioByHalf"]["heldout"] == pytest.approx(
        mine["1"]["nDCG@10"] / base["1"]["nDCG@10"]
    )
