"""Bring your own vectors: an index made for them, in process, over RCP and from the CLI."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from engine_support import Calls, make_engine, serving

import rcpkit

DIMENSION = 8
TEXTS = ["apples and pears", "bananas from the tropics", "cherries and apples", "dates in winter"]


def _vectors(count: int = len(TEXTS), seed: int = 7) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(count, DIMENSION))


def _documents() -> list[dict[str, Any]]:
    return [{"id": f"d{n}", "text": text, "meta": {"n": n}} for n, text in enumerate(TEXTS)]


def _cosine_order(vectors: np.ndarray, query: np.ndarray) -> tuple[list[str], list[float]]:
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    cosines = unit @ (query / np.linalg.norm(query))
    order = np.argsort(-cosines, kind="stable")
    return [f"d{i}#0" for i in order], [float(cosines[i]) for i in order]


@pytest.fixture
def index(tmp_path: Path) -> Any:
    with rcpkit.open(tmp_path / "idx", create=True, vectors=f"toy/model:{DIMENSION}") as opened:
        yield opened


def test_a_vector_search_ranks_by_cosine_and_scale_does_not_matter(index: Any) -> None:
    vectors = _vectors()
    index.add(_documents(), vectors=vectors * 10.0)  # normalised on the way in
    query = _vectors(1, seed=99)[0]
    ids, cosines = _cosine_order(vectors, query)
    found = index.search(vector=query * 0.01, k=len(TEXTS))
    assert [hit.id for hit in found] == ids
    assert [hit.score for hit in found] == pytest.approx(cosines, abs=1e-5)
    assert index.embedder == f"vectors:toy/model:{DIMENSION}"
    assert index.stats()["dimension"] == DIMENSION


def test_lists_of_lists_and_each_document_s_own_vector_are_taken_too(index: Any) -> None:
    vectors = _vectors()
    index.add(_documents()[:2], vectors=vectors[:2].tolist())
    index.add(
        [{**doc, "vector": list(v)} for doc, v in zip(_documents()[2:], vectors[2:], strict=True)]
    )
    assert index.search(vector=vectors[3], k=1)[0].id == "d3#0"


def test_hybrid_takes_the_text_for_the_lexical_arm_and_the_vector_for_the_dense(index: Any) -> None:
    vectors = _vectors()
    index.add(_documents(), vectors=vectors)
    hits = index.search("dates winter", vector=vectors[1], mode="hybrid", fusion="rrf", k=4)
    ids = [hit.id for hit in hits]
    assert set(ids[:2]) == {"d3#0", "d1#0"}  # the lexical arm's best and the dense arm's
    assert index.search("dates winter", mode="sparse", k=1)[0].id == "d3#0"
    with pytest.raises(rcpkit.LibraryError, match="give the query's vector") as caught:
        index.search("dates winter")
    assert caught.value.field == "vector"


@pytest.mark.parametrize(
    ("vectors", "words", "field"),
    [
        (np.ones((4, DIMENSION + 1)), "dimension 9", "vectors[0]"),
        ([[1.0] * DIMENSION] * 3 + [[1.0] * 3], "dimension 3", "vectors[3]"),
        (np.ones((3, DIMENSION)), "3 vectors for 4 documents", "vectors[0]"),
        (
            np.vstack([np.ones((3, DIMENSION)), np.full((1, DIMENSION), np.nan)]),
            "NaN",
            "vectors[3]",
        ),
        (np.vstack([np.ones((3, DIMENSION)), np.zeros((1, DIMENSION))]), "all zeros", "vectors[3]"),
        # The first bad vector is named, whichever way it is bad.
        (
            np.vstack(
                [np.ones((1, DIMENSION)), np.zeros((1, DIMENSION)), np.full((2, DIMENSION), np.inf)]
            ),
            "all zeros",
            "vectors[1]",
        ),
        (
            np.vstack(
                [
                    np.ones((2, DIMENSION)),
                    np.full((1, DIMENSION), -np.inf),
                    np.zeros((1, DIMENSION)),
                ]
            ),
            "infinite",
            "vectors[2]",
        ),
        (None, "give each document's vector", "documents[0].vector"),
    ],
)
def test_vectors_that_do_not_fit_are_refused_and_nothing_is_written(
    index: Any, vectors: Any, words: str, field: str
) -> None:
    with pytest.raises(rcpkit.LibraryError, match=words) as caught:
        index.add(_documents(), vectors=vectors)
    assert caught.value.field == field
    assert index.stats()["documents"] == 0


def test_a_query_vector_of_another_dimension_is_refused(index: Any) -> None:
    index.add(_documents(), vectors=_vectors())
    with pytest.raises(rcpkit.LibraryError, match="dimension 3") as caught:
        index.search(vector=[0.1, 0.2, 0.3])
    assert caught.value.field == "vector"


def test_the_index_keeps_the_identity_of_its_vectors(tmp_path: Path, index: Any) -> None:
    index.add(_documents(), vectors=_vectors())
    index.close()
    with pytest.raises(
        rcpkit.LibraryError, match="holds vectors:toy/model:8 vectors, not vectors:other:8"
    ):
        rcpkit.open(tmp_path / "idx", vectors="other:8")
    with pytest.raises(rcpkit.LibraryError, match="not vectors:16"):
        rcpkit.open(tmp_path / "idx", vectors=16)
    with rcpkit.open(tmp_path / "idx") as again:  # no need to say it again
        assert again.search(vector=_vectors()[2], k=1)[0].id == "d2#0"


def test_an_index_with_a_model_takes_no_vectors(tmp_path: Path) -> None:
    with rcpkit.open(tmp_path / "idx", create=True, embedder="hashing:8") as opened:
        with pytest.raises(rcpkit.LibraryError, match="embeds its documents with") as caught:
            opened.add(_documents(), vectors=_vectors())
        assert caught.value.field == "vectors[0]"
        opened.add(_documents())
        # The same check as `retrieve`'s wire `vector` (§15.7: two models' vectors never meet).
        with pytest.raises(rcpkit.LibraryError, match="embeds queries with") as refused:
            opened.search("first", vector=_vectors()[0])
        assert refused.value.field == "vector"


async def test_index_add_over_rcp_carries_vectors_only_into_an_index_made_for_them(
    tmp_path: Path,
) -> None:
    vectors = _vectors()
    own = make_engine(tmp_path / "own", embedder=f"vectors:{DIMENSION}")
    try:
        async with serving(own) as peer:
            call = Calls(peer)
            documents = [
                {**doc, "vector": v.tolist()} for doc, v in zip(_documents(), vectors, strict=True)
            ]
            added = await call.result("index/add", {"documents": documents})
            assert added["ids"] == ["d0", "d1", "d2", "d3"]
            sparse = await call.result(
                "retrieve", {"query": "bananas tropics", "mode": "sparse", "k": 1}
            )
            assert sparse["hits"][0]["id"] == "d1#0"
            error = await call.error("index/add", {"documents": _documents()[:1]})
            assert error["code"] == -32602 and "give each document's vector" in error["message"]
    finally:
        own.close()
    with rcpkit.open(tmp_path / "own") as index:  # what RCP added, searched in process
        ids, _ = _cosine_order(vectors, vectors[2])
        assert [hit.id for hit in index.search(vector=vectors[2], k=4)] == ids
    model = make_engine(tmp_path / "model", embedder="hashing:8")
    try:
        async with serving(model) as peer:
            call = Calls(peer)
            error = await call.error(
                "index/add", {"documents": [{"text": "x", "vector": [1.0] * 8}]}
            )
            assert error["code"] == -32602
            assert error["data"]["field"] == "documents[0].vector"
    finally:
        model.close()


def test_rcpkit_index_vectors_loads_a_jsonl_file(tmp_path: Path) -> None:
    vectors = _vectors()
    lines = [
        json.dumps({"id": f"d{n}", "text": text, "vector": list(vectors[n]), "meta": {"n": n}})
        for n, text in enumerate(TEXTS)
    ]
    good = tmp_path / "docs.jsonl"
    good.write_text("\n".join(lines) + "\n")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        lines[0] + "\n" + json.dumps({"id": "x", "text": "x", "vector": [1.0, 2.0]}) + "\n"
    )
    folder = tmp_path / "idx"

    def index(path: Path) -> subprocess.CompletedProcess[str]:
        command = [
            sys.executable,
            "-m",
            "rcpkit",
            "index",
            "--vectors",
            str(path),
            "--index",
            str(folder),
        ]
        return subprocess.run(command, capture_output=True, text=True, check=False, timeout=120)

    done = index(good)
    assert done.returncode == 0, done.stderr
    refused = index(bad)
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines() == [
        f"rcpkit: {bad}:2: a vector of dimension 2; this index holds vectors:8 (dimension 8)"
    ]
    with rcpkit.open(folder) as opened:
        assert opened.stats()["documents"] == 4  # the refused file wrote nothing
        assert opened.search(vector=vectors[1], k=1)[0].id == "d1#0"
        assert [hit.id for hit in opened.search("winter", mode="sparse", filter={"n": 3})] == [
            "d3#0"
        ]


def test_a_postgresql_index_of_your_own_vectors(postgres_url: str) -> None:
    vectors = _vectors()
    with rcpkit.open(postgres_url, vectors=DIMENSION) as opened:
        opened.add(_documents(), vectors=vectors)
        ids, cosines = _cosine_order(vectors, vectors[0])
        found = opened.search(vector=vectors[0], k=4)
        assert [hit.id for hit in found] == ids
        assert [hit.score for hit in found] == pytest.approx(cosines, abs=1e-5)
    with pytest.raises(rcpkit.LibraryError, match="not vectors:16"):
        rcpkit.open(postgres_url, vectors=16)


def test_a_closed_index_leaves_no_write_ahead_log_behind(tmp_path: Path) -> None:
    # Issue 51.5: bytes on disk after close. The per-thread reader connections outlive
    # close, so SQLite's last-connection checkpoint never ran and the WAL (as large as
    # the rows written) stayed beside the file.
    folder = tmp_path / "idx"
    index = rcpkit.open(folder, create=True, vectors=DIMENSION)
    index.add(_documents(), vectors=_vectors())
    assert index.search("apples", vector=_vectors(1)[0], k=2)  # a reader connection opens
    index.close()
    log = folder / "index.sqlite3-wal"
    assert not log.exists() or log.stat().st_size == 0
    with rcpkit.open(folder) as reopened:  # nothing the log held was lost
        assert [hit.id for hit in reopened.search("apples", mode="sparse", k=4)] == [
            "d0#0",
            "d2#0",
        ]


def _stored_text_bytes(folder: Path) -> int:
    with sqlite3.connect(folder / "index.sqlite3") as db:
        return int(db.execute("SELECT coalesce(sum(length(text)), 0) FROM documents").fetchone()[0])


def test_a_one_chunk_document_s_text_is_stored_once_and_read_whole(tmp_path: Path) -> None:
    # Issue 51.5: the documents row held the text its only chunk holds (400 B a chunk).
    folder = tmp_path / "idx"
    long = " ".join(f"word{n}" for n in range(2_000))  # own vectors: one chunk, however long
    documents = [*_documents(), {"id": "long", "text": long}]
    with rcpkit.open(folder, create=True, vectors=DIMENSION) as index:
        index.add(documents, vectors=_vectors(len(documents)))
        assert [stored.text for stored in index.get([d["id"] for d in documents])] == [
            d["text"] for d in documents
        ]
        hits = index.search("apples", mode="sparse", k=4)
        assert [(hit.id, hit.text) for hit in hits] == [
            ("d0#0", TEXTS[0]),
            ("d2#0", TEXTS[2]),
        ]
    assert _stored_text_bytes(folder) == 0


def test_an_index_whose_documents_hold_their_text_again_reads_the_same(tmp_path: Path) -> None:
    # The layout before issue 51.5 kept every document's whole text: such an index
    # (here rewritten to it) answers exactly as the new one.
    folder = tmp_path / "idx"
    with rcpkit.open(folder, create=True, vectors=DIMENSION) as index:
        index.add(_documents(), vectors=_vectors())
        query = _vectors(1, seed=99)[0]
        before = [(h.id, h.text, h.score) for h in index.search("apples", vector=query, k=4)]
    with sqlite3.connect(folder / "index.sqlite3") as db:
        for n, text in enumerate(TEXTS):
            db.execute("UPDATE documents SET text = ? WHERE doc_id = ?", (text, f"d{n}"))
        db.execute("PRAGMA user_version = 4")  # the layout's number then
    assert _stored_text_bytes(folder) == sum(len(text) for text in TEXTS)
    with rcpkit.open(folder) as index:
        after = [(h.id, h.text, h.score) for h in index.search("apples", vector=query, k=4)]
        assert [stored.text for stored in index.get([f"d{n}" for n in range(4)])] == TEXTS
    assert after == before
    with sqlite3.connect(folder / "index.sqlite3") as db:  # upgraded: older rcpkit refuses it
        assert db.execute("PRAGMA user_version").fetchone() == (5,)


def _long_documents(count: int) -> list[dict[str, Any]]:
    # Rows of ~2.1 KB (a 384-float vector and ~550 characters): just over half a 4 KB page.
    words = np.random.default_rng(3).integers(0, 5_000, size=(count, 90))
    return [{"id": f"l{n}", "text": " ".join(f"w{w}" for w in row)} for n, row in enumerate(words)]


def _build(folder: Path, documents: list[dict[str, Any]], vectors: np.ndarray) -> None:
    with rcpkit.open(folder, create=True, vectors=vectors.shape[1]) as index:
        index.add(documents, vectors=vectors)


def _page_size(folder: Path) -> int:
    with sqlite3.connect(folder / "index.sqlite3") as db:
        return int(db.execute("PRAGMA page_size").fetchone()[0])


def test_chunk_rows_fill_their_pages(tmp_path: Path) -> None:
    # Issue 51.5: a chunk row just over half a 4 KB page took a page of its own.
    documents = _long_documents(200)
    vectors = np.random.default_rng(5).normal(size=(len(documents), 384))
    _build(tmp_path / "idx", documents, vectors)
    with sqlite3.connect(tmp_path / "idx" / "index.sqlite3") as db:
        size, unused = db.execute(
            "SELECT sum(pgsize), sum(unused) FROM dbstat WHERE name = 'chunks'"
        ).fetchone()
    assert unused / size < 0.15
    # An index of 4 KB pages (every index before) answers the same: built by a process
    # whose store still makes them.
    (tmp_path / "in.json").write_text(json.dumps([documents, vectors.tolist()]))
    script = (
        "import json, sys, numpy as np, rcpkit; import rcpkit.engine.store.sqlite.file as f;"
        " f.PAGE_SIZE = 4096; docs, vectors = json.loads(open(sys.argv[1]).read());"
        " index = rcpkit.open(sys.argv[2], create=True, vectors=384);"
        " index.add(docs, vectors=np.array(vectors)); index.close()"
    )
    subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "in.json"), str(tmp_path / "old")],
        check=True,
    )
    assert (_page_size(tmp_path / "old"), _page_size(tmp_path / "idx")) == (4096, 16384)
    answers = []
    for name in ("old", "idx"):
        with rcpkit.open(tmp_path / name) as index:
            found = index.search("w17 w42", vector=vectors[9], k=5)
            answers.append([(hit.id, hit.text, hit.score) for hit in found])
    assert answers[0] == answers[1]


def test_the_vectors_are_stored_once_and_a_reopened_index_answers_as_a_rebuild(
    tmp_path: Path,
) -> None:
    # Issue 51.5: index.mirror held every float32 vector again, beside SQLite's copy
    # (1,536 of the 4,338 bytes a chunk took at 100k chunks).
    folder = tmp_path / "idx"
    vectors = np.random.default_rng(11).normal(size=(300, 384))
    _build(folder, [{"id": f"v{n}", "text": f"note {n} on apples"} for n in range(300)], vectors)
    assert (folder / "index.mirror").stat().st_size < vectors.astype(np.float32).nbytes / 4

    def hits() -> list[object]:
        with rcpkit.open(folder) as index:
            return [
                [(hit.id, hit.score) for hit in index.search(query, vector=vectors[17], mode=mode)]
                for query, mode in (("apples", "dense"), ("note 17", "hybrid"))
            ]

    from_the_cache = hits()
    assert from_the_cache[0][0][0] == "v17#0"
    (folder / "index.mirror").unlink()
    assert hits() == from_the_cache  # rebuilt from SQLite alone: the same scores, to the bit


def _vocabulary_with_its_rowid(folder: Path) -> None:
    """The vocabulary table as every index before issue 51.5's cut held it."""
    with sqlite3.connect(folder / "index.sqlite3") as db:
        db.executescript(
            "ALTER TABLE vocabulary RENAME TO words;"
            " CREATE TABLE vocabulary (tenant TEXT NOT NULL, word TEXT NOT NULL,"
            " df INTEGER NOT NULL, PRIMARY KEY (tenant, word));"
            " INSERT INTO vocabulary SELECT * FROM words; DROP TABLE words;"
        )


def test_the_vocabulary_keeps_its_words_once_and_corrects_as_before(tmp_path: Path) -> None:
    # Issue 51.5: the vocabulary's (tenant, word) key was a second b-tree beside its rows
    # (31 of the 2,801 bytes a chunk took at 100k chunks).
    for name in ("new", "old"):
        with rcpkit.open(tmp_path / name, create=True, vectors=DIMENSION) as index:
            index.add(_documents(), vectors=_vectors())
    with sqlite3.connect(tmp_path / "new" / "index.sqlite3") as db:
        names = [name for (name,) in db.execute("SELECT name FROM sqlite_master")]
    assert "sqlite_autoindex_vocabulary_1" not in names
    _vocabulary_with_its_rowid(tmp_path / "old")
    answers = []
    for name in ("new", "old"):
        with rcpkit.open(tmp_path / name) as index:  # words counted up into either table
            index.add([{"id": "e", "text": "elderberries in apples"}], vectors=_vectors(1))
        with rcpkit.open(tmp_path / name) as index:
            found = index.search("aples and chery", mode="sparse", rewrite="rewrite", k=4)
            again = index.search("elderberies", mode="sparse", rewrite="rewrite", k=4)
            answers.append([[(hit.id, hit.score) for hit in hits] for hits in (found, again)])
    assert answers[0] == answers[1]
    assert sorted(hit[0] for hit in answers[0][0]) == ["d0#0", "d2#0", "e#0"]  # "aples" corrected
    assert [hit[0] for hit in answers[0][1]] == ["e#0"]
