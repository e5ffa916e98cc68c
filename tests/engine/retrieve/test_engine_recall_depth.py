"""How deep each arm of a retrieve reads (§7.7 candidateK; issue 50: a deeper pool to fuse)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from engine_support import indexed, make_engine

from rcpkit.engine.engine import Engine


def _notes(count: int) -> list[dict[str, Any]]:
    """One-chunk notes whose words no query below holds: only the dense arm finds them."""
    return [
        {"id": f"note-{n}", "text": f"Note {n} lists item{n} beside item{n + 1}."}
        for n in range(count)
    ]


async def _candidates(folder: Path, params: dict[str, Any], **settings: Any) -> int:
    engine = make_engine(folder, default_candidate_k=10, **settings)
    try:
        async with indexed(engine, _notes(60)) as call:
            result = await call.result("retrieve", {"query": "zebra migration", **params})
    finally:
        engine.close()
    count: int = result["usage"]["candidates"]
    return count


async def test_a_hybrid_retrieve_reads_each_arm_twice_the_page_deep(tmp_path: Path) -> None:
    # A document just past the page in one arm and near the top of the other fuses into
    # the page: a pool as deep as the page left it out (man-verbose R@100, docs/quality.md).
    assert await _candidates(tmp_path / "default", {"k": 20}) == 40
    assert await _candidates(tmp_path / "rrf", {"k": 20, "fusion": {"method": "rrf"}}) == 40


@pytest.mark.parametrize(
    ("params", "settings", "read"),
    [
        ({"k": 20, "mode": "dense"}, {}, 26),  # one arm: nothing to fuse, the page and a few
        ({"k": 20, "candidateK": 25}, {}, 25),  # the client's own pool, as asked
        ({"k": 20}, {"fusion_depth_factor": 1}, 20),  # the setting turns it off
        ({"k": 3}, {}, 10),  # the engine's default pool when it is deeper
    ],
)
async def test_the_depth_is_the_clients_or_the_settings(
    tmp_path: Path, params: dict[str, Any], settings: dict[str, Any], read: int
) -> None:
    assert await _candidates(tmp_path, params, **settings) == read


def _long(number: int) -> dict[str, Any]:
    """A document the engine cuts into about ten chunks, every one holding "topic"."""
    sentences = (f"Sentence {n} of report {number} covers topic {n % 5}." for n in range(200))
    return {"id": f"report-{number}", "text": " ".join(sentences)}


async def test_a_widened_document_page_keeps_its_feedback_pass_as_deep(tmp_path: Path) -> None:
    # 40 documents of ten chunks: a pool of 40 chunks holds too few documents for a page
    # of 20, so the read widens; the feedback pass read the lexical arm at the narrow pool
    # again, and the page's lexical evidence was the narrow pool's.
    engine: Engine = make_engine(tmp_path, default_candidate_k=10, prf_min_feedback_terms=0.0)
    asked: list[int] = []
    lexical = engine.store.index.lexical

    def recording(terms: list[str], k: int, *args: Any, **kwargs: Any) -> Any:
        asked.append(k)
        return lexical(terms, k, *args, **kwargs)

    try:
        async with indexed(engine, [_long(number) for number in range(40)]) as call:
            engine.store.index.lexical = recording  # type: ignore[method-assign]
            result = await call.result(
                "retrieve", {"query": "report topic", "k": 20, "unit": "document"}
            )
    finally:
        engine.close()
    assert "feedback" in result["usage"]["stages"]
    widest = max(asked)
    assert widest > 40  # the read widened
    assert asked[-2:] == [widest, widest]  # the widened read's first pass, then its feedback
