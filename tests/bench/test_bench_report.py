"""The one report every bench suite prints through: rows, table, Markdown, JSON, README block."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rcpkit_bench.report import (
    BEGIN,
    END,
    Figure,
    collecting,
    provenance,
    record,
    render_json,
    render_markdown,
    render_table,
    replace_block,
    update_file,
)

THROUGHPUT = Figure("protocol", "stdio ping, 64 in flight", 195_522, "req/s", "reference", 129_006)
LATENCY = Figure(
    "engine",
    "retrieve hybrid p50 against its raw index calls",
    9.56,
    "ms",
    "raw index calls",
    8.52,
    higher_is_better=False,
    target=1.5,
    note="p95 11.50 ms",
)
ABSOLUTE = Figure("engine", "resident memory", 51.0, "MB", higher_is_better=False)


def test_the_ratio_is_the_figure_over_its_baseline() -> None:
    assert THROUGHPUT.ratio == pytest.approx(195_522 / 129_006)
    assert ABSOLUTE.ratio is None


def test_a_target_is_a_bound_on_the_ratio_in_the_figures_direction() -> None:
    assert LATENCY.target_met is True
    assert (
        Figure("e", "n", 2.0, "ms", "b", 1.0, higher_is_better=False, target=1.5).target_met
        is False
    )
    assert Figure("e", "n", 0.79, "x", "b", 1.0, target=0.8).target_met is False
    assert Figure("e", "recall", 0.9999, "recall", "exact", 1.0, target=1.0).target_met is True
    assert THROUGHPUT.target_met is None


def test_the_table_shows_each_row_with_its_direction_and_target() -> None:
    text = render_table([THROUGHPUT, LATENCY, ABSOLUTE])
    header, _rule, *rows = text.splitlines()[:5]
    assert header.split()[:3] == ["suite", "benchmark", "rcpkit"]
    assert "notes" in header
    assert "195,522 req/s" in rows[0] and "129,006 req/s" in rows[0]
    assert "1.52× ↑ better" in rows[0]
    assert "1.12× ↓ better" in rows[1] and "≤ 1.50× ✓" in rows[1] and "p95 11.50 ms" in rows[1]
    assert "51 MB" in rows[2] and "×" not in rows[2]
    column = header.index("rcpkit")  # columns line up
    assert all(row[column - 2 : column] == "  " for row in rows)
    assert "ratio = rcpkit ÷ baseline" in text


@pytest.mark.parametrize(
    ("value", "shown"), [(0.17 / 2001, "0.000085×"), (0.5, "0.50×"), (14.87, "14.87×")]
)
def test_a_ratio_is_printed_as_a_plain_decimal(value: float, shown: str) -> None:
    figure = Figure("protocol", "p99", value, "ms", "reference", 1.0, higher_is_better=False)
    assert f"{shown} ↓ better" in render_table([figure])


def test_markdown_has_one_column_per_header_and_escapes_pipes() -> None:
    piped = Figure("http", "a | b", 1.0, "s")
    text = render_markdown([THROUGHPUT, piped])
    header, rule, first, second = text.splitlines()[:4]
    assert header == (
        "| suite | benchmark | rcpkit | baseline figure | baseline | ratio | target |"
    )  # no notes column when no row has a note
    assert rule == "|---|---|---:|---:|---|---:|---|"
    assert first.startswith("| protocol | stdio ping, 64 in flight | 195,522 req/s |")
    assert "a \\| b" in second
    assert second.count(" | ") == header.count(" | ")


def test_json_carries_the_rows_with_ratio_and_the_run_metadata() -> None:
    document = json.loads(render_json([THROUGHPUT, LATENCY], command="rcpkit bench", scale="quick"))
    assert document["command"] == "rcpkit bench" and document["scale"] == "quick"
    first, second = document["figures"]
    assert first["suite"] == "protocol" and first["value"] == 195_522
    assert first["ratio"] == pytest.approx(195_522 / 129_006)
    assert second["higher_is_better"] is False and second["target"] == 1.5
    assert second["target_met"] is True


def test_record_adds_rows_to_the_enclosing_collection_only() -> None:
    with collecting() as outer:
        record(THROUGHPUT)
        with collecting() as inner:
            record(LATENCY)
    assert outer == [THROUGHPUT] and inner == [LATENCY]
    with pytest.raises(RuntimeError, match="collecting"):
        record(ABSOLUTE)


README = f"# title\n\nintro stays\n\n{BEGIN}\nold table\n{END}\n\n## after\nkept too\n"


def test_the_block_between_the_markers_is_replaced_and_nothing_else() -> None:
    updated = replace_block(README, "| new |\n")
    assert updated == f"# title\n\nintro stays\n\n{BEGIN}\n| new |\n{END}\n\n## after\nkept too\n"
    assert replace_block(updated, "| new |\n") == updated  # re-running changes nothing


@pytest.mark.parametrize(
    "text",
    [
        "# no markers at all\n",
        f"only the start\n{BEGIN}\n",
        f"{BEGIN}\none\n{END}\n{BEGIN}\ntwo\n{END}\n",
        f"{END}\nbackwards\n{BEGIN}\n",
    ],
)
def test_a_missing_or_misplaced_marker_is_a_clear_error(text: str) -> None:
    with pytest.raises(ValueError, match=r"README\.md.*bench:(begin|end)"):
        replace_block(text, "table", "README.md")


def test_update_file_rewrites_the_block_in_place(tmp_path: Path) -> None:
    path = tmp_path / "README.md"
    path.write_text(README, encoding="utf-8")
    update_file(path, "| new |")
    assert "| new |" in path.read_text(encoding="utf-8")
    assert "old table" not in path.read_text(encoding="utf-8")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["README.md"]


def test_update_file_leaves_a_file_without_markers_untouched(tmp_path: Path) -> None:
    path = tmp_path / "README.md"
    path.write_text("# nothing to generate\n", encoding="utf-8")
    with pytest.raises(ValueError, match="bench:begin"):
        update_file(path, "| new |")
    assert path.read_text(encoding="utf-8") == "# nothing to generate\n"


def test_the_provenance_line_names_the_command_machine_and_scale() -> None:
    line = provenance("rcpkit bench --quick", "quick", ["http"])
    assert line.startswith("Generated by `rcpkit bench --quick` on 20")
    assert "cores, " in line and "Python 3." in line
    assert "`--quick` run" in line and "skipped: http" in line
    assert "run" not in provenance("rcpkit bench", "full").split(")", 1)[1]
