"""The default retrieve's feedback pass: RM3 on the lexical arm (issue 16)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine_support import Calls, indexed, make_engine, serving

from rcpkit.engine.retrieve.prf import expansion_terms, feedback_terms
from rcpkit.engine.retrieve.stages import Candidate
from rcpkit.engine.text.analysis import analyze_query

NOTES = [
    {"id": "a", "text": "solar panels and photovoltaic inverters on the roof"},
    {"id": "b", "text": "solar panels need photovoltaic inverters and cabling"},
    {"id": "c", "text": "cleaning solar panels keeps photovoltaic output high"},
    {"id": "x", "text": "photovoltaic inverters convert direct current for the grid"},
    {"id": "d", "text": "the history of the bicycle in european cities"},
]


def test_expansion_terms_need_two_passages_and_skip_the_query_terms() -> None:
    passages = [["solar", "inverter", "roof"], ["solar", "inverter", "cabl"], ["roof", "x"]]
    # "inverter" (passages 1, 2) outweighs "roof" (1, 3): the rank prior favours the top.
    assert expansion_terms(["solar"], passages, 10) == ["inverter", "roof"]
    assert expansion_terms(["solar"], passages, 1) == ["inverter"]
    assert expansion_terms(["solar"], passages[:1], 5) == ["inverter", "roof"]  # one passage: all


async def _sparse_scores(folder: Path, params: dict[str, Any], **settings: Any) -> dict[str, Any]:
    engine = make_engine(folder, **settings)
    try:
        async with serving(engine) as peer:
            call = Calls(peer)
            await call.result("index/add", {"documents": NOTES})
            result = await call.result("retrieve", {"query": "solar panels", "k": 5, **params})
    finally:
        engine.close()
    hits = {hit["id"].partition("#")[0]: hit for hit in result["hits"]}
    return {"hits": hits, "stages": result["usage"]["stages"]}


async def test_feedback_lets_the_lexical_arm_find_a_document_without_the_query_words(
    tmp_path: Path,
) -> None:
    # These notes are one-liners, which the default skips (issue 33): the floor off.
    found = await _sparse_scores(tmp_path / "on", {}, prf_min_feedback_terms=0.0)
    assert "feedback" in found["stages"]
    assert "sparse" in found["hits"]["x"]["scores"]  # matched "photovoltaic inverters"
    without = await _sparse_scores(tmp_path / "off", {}, prf=False)
    assert "feedback" not in without["stages"]
    assert "sparse" not in without["hits"].get("x", {"scores": {}})["scores"]


async def test_an_explicit_mode_or_fusion_gets_exactly_that_pipeline(tmp_path: Path) -> None:
    for number, params in enumerate(({"mode": "sparse"}, {"fusion": {"method": "rrf"}})):
        found = await _sparse_scores(tmp_path / str(number), params)
        assert "feedback" not in found["stages"]


async def test_a_query_past_the_lexical_term_limit_is_cut_and_says_so_once(
    tmp_path: Path,
) -> None:
    # Both lexical passes, the feedback pass's too, cut it; usage.notes says so once.
    engine = make_engine(tmp_path / "index")
    query = " ".join(f"solar{n} panel{n}" for n in range(40)) + " photovoltaic inverters"
    sentence = "solar panels and photovoltaic inverters on roof {} need cabling and cleaning. "
    long = [{"id": f"s{n}", "text": sentence.format(n) * 4} for n in range(6)]  # fed back
    async with indexed(engine, long) as call:
        result = await call.result("retrieve", {"query": query, "k": 3})
    engine.close()
    assert "feedback" in result["usage"]["stages"]
    notes = result["usage"]["notes"]
    assert sum("query cut to its first 64 terms" in note for note in notes) == 1


async def test_the_feedback_query_is_analysed_as_the_first_pass_and_code_as_indexed(
    tmp_path: Path,
) -> None:
    # The expanded query keeps the first lexical pass's terms (identifiers split), and
    # what it learns from code passages are terms the index holds for code.
    engine = make_engine(tmp_path / "index", prf_min_feedback_terms=0.0)
    source = "def parse_filter_{}(text):\n    return split_tokens(text)\n"
    code = [{"id": f"lib{n}.py", "text": source.format(n), "modality": "code"} for n in range(4)]
    async with indexed(engine, code):
        rows = engine.store.fetch(range(1, 50))
        ranking = [Candidate(key, 1.0, {}) for key in sorted(rows)]
        found = feedback_terms(engine, "parse_filter tokens", ranking)
    engine.close()
    assert found is not None
    own = analyze_query("parse_filter tokens")
    assert found[1][: len(own)] == own
    assert {"splittoken", "split"} <= set(found[1])  # not prose's "split_token"
