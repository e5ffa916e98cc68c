"""Near-duplicate chunks collapsed to the best-ranked one (issue 36 item 5)."""

from __future__ import annotations

from pathlib import Path

from engine_support import ids, indexed, make_engine

PREAMBLE = "from fastapi.testclient import TestClient\n\nclient = TestClient(app)"
FILES = [
    *({"id": f"test_{n}.py", "text": PREAMBLE if n % 2 else PREAMBLE.upper()} for n in range(5)),
    {"id": "guide.md", "text": "Create a TestClient for the app and call client.get in tests"},
    {"id": "near.md", "text": "one two three four five six seven eight nine ten eleven twelve"},
    {"id": "near-copy.md", "text": "one two three four five six seven eight nine ten eleven"},
    {"id": "other.md", "text": "import the app from fastapi and send it requests"},
    *(
        {"id": f"filler-{n}.md", "text": f"unrelated note number {n} about gardens"}
        for n in range(20)
    ),
]
QUERY = {"query": "fastapi TestClient import", "k": 3, "mode": "sparse"}


async def test_copies_of_one_text_fill_one_place_not_the_top_five(tmp_path: Path) -> None:
    engine = make_engine(tmp_path / "index")
    async with indexed(engine, FILES) as call:
        result = await call.result("retrieve", QUERY)
        found = ids(result)
        assert found[0].startswith("test_")
        assert set(found[1:]) == {"guide.md#0", "other.md#0"}
        assert "collapsed 4 near-duplicate chunks" in result["usage"]["notes"]
        near = ids(await call.result("retrieve", {**QUERY, "query": "one two three"}))
        assert {"near.md#0", "near-copy.md#0"} <= set(near)  # near copies stay by default
    engine.close()


async def test_near_copies_collapse_below_a_similarity_of_one(tmp_path: Path) -> None:
    engine = make_engine(tmp_path / "index", duplicate_similarity=0.8)
    async with indexed(engine, FILES) as call:
        near = ids(await call.result("retrieve", {**QUERY, "query": "one two three"}))
        assert len({"near.md#0", "near-copy.md#0"} & set(near)) == 1
    engine.close()


async def test_pages_over_collapsed_copies_are_disjoint_and_complete(tmp_path: Path) -> None:
    engine = make_engine(tmp_path / "index")
    async with indexed(engine, FILES) as call:
        whole = ids(await call.result("retrieve", {**QUERY, "k": 10}))
        paged: list[str] = []
        params = {**QUERY, "k": 1}
        for _ in range(10):
            page = await call.result("retrieve", params)
            paged += ids(page)
            if "nextCursor" not in page:
                break
            params = {**QUERY, "k": 1, "cursor": page["nextCursor"]}
        assert paged == whole
        assert len(whole) == len(set(whole)) == 3  # the copies, once; nothing else matches
    engine.close()


async def test_collapse_duplicates_off_returns_every_copy(tmp_path: Path) -> None:
    engine = make_engine(tmp_path / "index", collapse_duplicates=False)
    async with indexed(engine, FILES) as call:
        found = ids(await call.result("retrieve", {**QUERY, "k": 5}))
        assert all(hit.startswith("test_") for hit in found)
    engine.close()


def test_collapse_keeps_the_first_of_each_text_and_reads_no_further_than_needed() -> None:
    from rcpkit.engine.retrieve.duplicates import collapse_duplicates
    from rcpkit.engine.retrieve.stages import Candidate
    from rcpkit.engine.store.base import ChunkRow

    texts = ["alpha beta", "Alpha, beta!", "gamma", "delta", "gamma", "epsilon", "zeta"]
    read: list[int] = []

    def fetch(keys: list[int]) -> dict[int, ChunkRow]:
        read.extend(keys)
        return {
            k: ChunkRow(k, f"d{k}", 0, 0, 1, texts[k], None, None, "text", None, None, "", {})
            for k in keys
        }

    candidates = [Candidate(key, 1.0 - key / 10) for key in range(len(texts))]
    collapsed = collapse_duplicates(candidates, fetch, depth=2)
    assert [c.key for c in collapsed.candidates][:3] == [0, 2, 3]
    assert collapsed.dropped == 2  # "Alpha, beta!" and the second "gamma", in the window
    assert 5 not in read and 6 not in read  # one window held depth + 1 kept chunks
    everything = collapse_duplicates(candidates, fetch, depth=len(texts))
    assert [c.key for c in everything.candidates] == [0, 2, 3, 5, 6]


async def test_a_lean_single_arm_pool_pages_as_the_whole_pool_does(tmp_path: Path) -> None:
    """Issue 31 item 4: a sparse/dense retrieve recalls only what its page needs."""
    documents = [
        {"id": f"n{n:03d}", "text": f"garden note {n} " + "soil water " * (n % 7)}
        for n in range(120)
    ]
    copies = [{"id": f"copy{n}", "text": "garden soil water " * 6} for n in range(30)]
    engine = make_engine(tmp_path / "index")
    async with indexed(engine, documents + copies) as call:
        for mode in ("sparse", "dense"):
            query = {"query": "garden soil water", "mode": mode}
            whole = await call.result("retrieve", {**query, "k": 40, "candidateK": 200})
            lean: list[str] = []
            params: dict[str, object] = {**query, "k": 8}
            for _ in range(5):  # 40 hits in pages of 8: the collapsed copies refill
                page = await call.result("retrieve", params)
                lean += ids(page)
                params = {**query, "k": 8, "cursor": page["nextCursor"]}
            assert lean == ids(whole)[:40]
            assert len([hit for hit in lean if hit.startswith("copy")]) <= 1
    engine.close()
