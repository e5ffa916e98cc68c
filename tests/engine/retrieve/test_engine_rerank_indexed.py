"""The hybrid rerank inside retrieve scores indexed rows as recall scored them (issue 33 item 3)."""

from __future__ import annotations

from pathlib import Path

import pytest
from engine_support import ids, indexed, make_engine

TOPICS = ["wing lift", "boundary layer", "shock wave", "heat transfer", "panel flutter"]
DOCUMENTS = [
    {
        "id": f"d{n}",
        "title": f"{TOPICS[n % 5]} study {n}",
        "text": f"{TOPICS[n % 5]} at mach {n} with {TOPICS[(n * 3) % 5]} effects "
        + "measured in the tunnel " * (n % 4),
    }
    for n in range(16)
]


async def test_reranking_the_default_candidates_keeps_the_default_ranking(tmp_path: Path) -> None:
    engine = make_engine(tmp_path / "index")
    async with indexed(engine, DOCUMENTS) as call:
        for text in ("shock wave boundary layer", "heat transfer in the tunnel", "wing lift"):
            plain = await call.result("retrieve", {"query": text, "k": 10})
            reranked = await call.result(
                "retrieve", {"query": text, "k": 10, "rerank": {"method": "cross-encoder"}}
            )
            assert reranked["usage"]["reranked"] >= len(plain["hits"])  # the whole page
            assert ids(reranked) == ids(plain), text
    engine.close()


async def test_the_rerank_method_over_this_engines_own_hits_ranks_them_as_retrieve(
    tmp_path: Path,
) -> None:
    """§7.6 `rerank` of the texts `retrieve` returned: the rows found, scored as retrieve."""
    engine = make_engine(tmp_path / "index")
    async with indexed(engine, DOCUMENTS) as call:
        for text in ("shock wave boundary layer", "heat transfer in the tunnel"):
            hits = (await call.result("retrieve", {"query": text, "k": 16}))["hits"]
            shuffled = list(reversed(hits))
            reranked = await call.result(
                "rerank",
                {"query": text, "passages": [hit["text"] for hit in shuffled]},
            )
            # Each passage gets the score retrieve gave its row (ties may order apart).
            given = zip(shuffled, reranked["scores"], strict=True)
            scored = {hit["id"]: score for hit, score in given}
            for hit in hits:
                assert abs(scored[hit["id"]] - hit["score"]) < 1e-5, (text, hit["id"])
            # One passage that is not a row here: the whole list is scored as text.
            foreign = [hit["text"] for hit in shuffled] + ["shock wave over a wing at mach 2"]
            mixed = await call.result("rerank", {"query": text, "passages": foreign})
            assert len(mixed["scores"]) == len(foreign)
    engine.close()


CODE = [
    {
        "id": f"lib{n}.py",
        "text": f"def parse_filter(text, limit={n}):\n    return split_tokens(text)[:limit]\n"
        + "    # boundary layer heat transfer\n" * (n % 3),
        "title": f"token filter {n}" if n % 2 else f"module {n}",  # a field text lacks
        "modality": "code",
    }
    for n in range(8)
]


async def _own_hits_reranked(
    tmp_path: Path, documents: list[dict[str, object]], text: str
) -> tuple[list[dict[str, object]], list[float]]:
    engine = make_engine(tmp_path / "index")
    async with indexed(engine, documents) as call:
        hits = (await call.result("retrieve", {"query": text, "k": 16}))["hits"]
        asked = {"query": text, "passages": [hit["text"] for hit in hits]}
        scores = (await call.result("rerank", asked))["scores"]
    engine.close()
    return hits, scores


async def test_reranking_own_code_hits_gives_their_retrieve_scores(tmp_path: Path) -> None:
    # A code row holds its identifiers split ("parsefilt", "pars", "filter"), not prose's
    # "parse_filt" (tokens "parse", "filt"): it is looked up by that analysis too.
    hits, scores = await _own_hits_reranked(tmp_path, CODE, "parse_filter token filter")
    assert len(hits) == len(CODE)
    for hit, score in zip(hits, scores, strict=True):
        assert abs(score - hit["score"]) < 1e-5, hit["id"]


async def test_reranking_own_hits_for_a_query_past_the_term_limit_gives_their_scores(
    tmp_path: Path,
) -> None:
    # Recall cuts a query to its first 64 terms; the rerank of its hits cuts it alike.
    text = " ".join(f"filler{n}" for n in range(64)) + " shock wave boundary layer"
    hits, scores = await _own_hits_reranked(tmp_path, DOCUMENTS, text)
    assert hits
    for hit, score in zip(hits, scores, strict=True):
        assert abs(score - hit["score"]) < 1e-5, hit["id"]


async def test_a_repeated_query_word_weighs_by_its_count_in_retrieve_and_in_rerank(
    tmp_path: Path,
) -> None:
    # Issue 50: a long request repeats its subject. "wave" three times outweighs one
    # "lift" met three times in a row of the same length (each word in as many rows).
    rows = [
        {"id": "lifts", "text": "lift lift lift tunnel"},
        {"id": "waves", "text": "wave tunnel tunnel tunnel"},
        {"id": "other", "text": "lift wave drag drag"},
    ] + [{"id": f"pad{n}", "text": f"drag panel {n}"} for n in range(6)]
    engine = make_engine(tmp_path / "index")
    async with indexed(engine, rows) as call:
        text = "wave wave wave lift"
        sparse = await call.result("retrieve", {"query": text, "k": 3, "mode": "sparse"})
        assert ids(sparse)[:2] == ["other#0", "waves#0"]
        once = await call.result("retrieve", {"query": "wave lift", "k": 3, "mode": "sparse"})
        assert ids(once) == ["other#0", "lifts#0", "waves#0"]
        hits = (await call.result("retrieve", {"query": text, "k": 9}))["hits"]
        asked = {"query": text, "passages": [hit["text"] for hit in hits]}
        scores = (await call.result("rerank", asked))["scores"]
        for hit, score in zip(hits, scores, strict=True):
            assert abs(score - hit["score"]) < 1e-5, hit["id"]
    engine.close()


async def test_an_identifiers_parts_weigh_one_term_together_in_retrieve_and_in_rerank(
    tmp_path: Path,
) -> None:
    # Issue 50: "PostgreSQL" is searched whole (postgresql) and, for code that spells
    # it postgres_sql, by its parts (postgr, sql). The parts are one word's evidence:
    # each weighs 1/2. Counted in full, the query said "Postgres" and "SQL" twice over
    # what it meant, and on man-long a page naming both outranked the page asked for.
    rows = [
        {"id": "named", "text": "postgresql cluster"},
        {"id": "parts", "text": "postgres shell sql"},
        {"id": "both", "text": "postgresql postgres sql"},
    ] + [{"id": f"pad{n}", "text": f"backup panel {n}"} for n in range(6)]
    engine = make_engine(tmp_path / "index")
    async with indexed(engine, rows) as call:

        async def sparse(text: str) -> dict[str, float]:
            found = await call.result("retrieve", {"query": text, "k": 9, "mode": "sparse"})
            return {hit["id"]: hit["score"] for hit in found["hits"]}

        asked = await sparse("PostgreSQL")
        whole, postgres, sql = [await sparse(word) for word in ("postgresql", "postgres", "sql")]
        assert set(asked) == {"named#0", "parts#0", "both#0"}
        for key, score in asked.items():
            parts = postgres.get(key, 0.0) + sql.get(key, 0.0)
            assert score == pytest.approx(whole.get(key, 0.0) + parts / 2), key
        # The hybrid rerank of those hits weighs the parts alike.
        hits = (await call.result("retrieve", {"query": "PostgreSQL", "k": 9}))["hits"]
        passages = {"query": "PostgreSQL", "passages": [hit["text"] for hit in hits]}
        scores = (await call.result("rerank", passages))["scores"]
        for hit, score in zip(hits, scores, strict=True):
            assert abs(score - hit["score"]) < 1e-5, hit["id"]
    engine.close()
