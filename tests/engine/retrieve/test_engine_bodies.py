"""The feedback pass and the proximity stage read analysed bodies from the index."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from engine_support import indexed, make_engine

from rcpkit.engine.text import analysis
from rcpkit.engine.text.analysis import analyze_code_many, analyze_many

SOURCE = '''def parse_filter(text):
    """Parse a boundary layer filter expression into a tree."""
    return build_tree(text.split())
'''


def documents() -> list[dict[str, Any]]:
    """Bodies no other test analysed (the memo of analysed bodies is per process)."""
    tag = uuid.uuid4().hex[:8]
    prose = [
        {
            "id": f"d{n}",
            "text": f"heat transfer note {n} {tag} on the boundary layer of a wing. " * 5,
        }
        for n in range(8)
    ]
    return [*prose, {"id": "lib.py", "text": SOURCE + f"# {tag}\n", "modality": "code"}]


async def test_the_embedded_store_keeps_each_body_as_the_indexer_analysed_it(
    tmp_path: Path,
) -> None:
    engine = make_engine(tmp_path / "index", store="sqlite")
    async with indexed(engine, documents()):
        rows = engine.store.fetch(range(1, 200))  # every chunk's key
        bodies = engine.store.body_terms(list(rows))
    engine.close()
    assert set(bodies) == set(rows) and {row.doc_id for row in rows.values()} >= {"d0", "lib.py"}
    for key, row in rows.items():
        analyzer = analyze_code_many if row.modality == "code" else analyze_many
        assert bodies[key] == " ".join(analyzer([row.text])[0])


async def test_a_default_retrieve_analyses_no_body_the_index_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = make_engine(tmp_path / "index", store="sqlite")
    given = documents()
    analysed: dict[str, list[str]] = {"analyze_many": [], "analyze_code_many": []}
    for name, texts in analysed.items():
        real = getattr(analysis, name)

        def spy(batch: Any, real: Any = real, texts: list[str] = texts, **options: Any) -> Any:
            texts.extend(batch)
            return real(batch, **options)

        monkeypatch.setattr(analysis, name, spy)
    async with indexed(engine, given) as call:
        for texts in analysed.values():
            texts.clear()  # what indexing analysed
        result = await call.result("retrieve", {"query": "heat transfer boundary layer", "k": 5})
        rows = engine.store.fetch(range(1, 200)).values()  # every chunk
    engine.close()
    assert {"feedback", "proximity"} <= set(result["usage"]["stages"])
    prose = {row.text for row in rows if row.modality != "code"}
    code = {row.text for row in rows if row.modality == "code"}
    assert len(prose) == len(given) - 1 and len(code) == 1
    # The index holds each body as it was analysed, prose as prose and code as code,
    # and both stages read each as the index analysed it.
    assert not prose & set(analysed["analyze_many"])
    assert not code & set(analysed["analyze_code_many"] + analysed["analyze_many"])
