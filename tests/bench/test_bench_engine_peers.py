"""The peer comparison's corpus builder (`rcpkit bench engine --sizes`)."""

from __future__ import annotations

from pathlib import Path

from rcpkit_bench.engine_peers import build


def test_a_size_above_hnsw_up_to_is_built_and_reopened_exact_only(tmp_path: Path) -> None:
    engine = build(tmp_path / "z300", 300, graphs=False)
    try:
        assert engine.store.count()[1] == 300
        assert engine.dense.index.policy.ann_min_size == 301  # type: ignore[attr-defined]
    finally:
        engine.close()
    reopened = build(tmp_path / "z300", 300, graphs=False)  # every process reads the same file
    try:
        assert reopened.dense.index.policy.ann_min_size == 301  # type: ignore[attr-defined]
    finally:
        reopened.close()


def test_a_size_with_graphs_keeps_the_default_threshold(tmp_path: Path) -> None:
    engine = build(tmp_path / "z200", 200)
    try:
        assert engine.dense.index.policy.ann_min_size == 250_000  # type: ignore[attr-defined]
    finally:
        engine.close()
