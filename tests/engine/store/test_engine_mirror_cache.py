"""The embedded store's mirror cache (``index.mirror``): a reopened store answers as a rebuild.

Issue 15: the cache is a head start, never a source of truth. A store opened
from it and followed to the file's latest version must answer every arm —
lexical, dense, filtered, per tenant, at every servable pinned version — with
the same keys and the same scores, to the last bit, as a store that rebuilt
its mirror from SQLite; and a cache that is stale beyond replay, torn,
corrupt, another index's or of another format is ignored.
"""

from __future__ import annotations

import json
import logging
import mmap
import random
import shutil
import sqlite3
import struct
import subprocess
import sys
import time
import zlib
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rcpkit.engine.filters import OPERATORS, parse_filter
from rcpkit.engine.index import _mirror
from rcpkit.engine.index.dense import DensePolicy
from rcpkit.engine.store.base import DocumentRow, NewChunk, WriteBatch
from rcpkit.engine.store.sqlite import SQLiteStore

WORDS = [f"w{i}" for i in range(300)]
WEIGHTS = [1 / (rank + 1) for rank in range(len(WORDS))]
TENANTS = (None, "t1", "t2")
DIMENSION = 8
FIELDS = {"year": "int", "kind": "keyword", "tags": "keyword", "draft": "bool", "score": "float"}
FILTERS = [
    parse_filter(tree, FIELDS, OPERATORS, array_fields={"tags"})
    for tree in (
        {"field": "year", "op": "gte", "value": 2004},
        {"field": "kind", "op": "eq", "value": "memo"},
        {"field": "tags", "op": "contains", "value": "red"},
        {"field": "draft", "op": "eq", "value": True},
        {
            "or": [
                {"field": "score", "op": "lt", "value": 0.3},
                {"field": "year", "op": "eq", "value": 2001},
            ]
        },
    )
]
QUERIES = [["w0", "w3", "w40"], ["w1"], ["w7", "w150", "w299"], ["w2", "w5", "w11", "w90"]]


def batch(rng: random.Random, ids: list[int], tenant: str | None) -> WriteBatch:
    documents = []
    for i in ids:
        title = " ".join(rng.choices(WORDS, WEIGHTS, k=rng.randint(0, 3)))
        bodies = [
            " ".join(rng.choices(WORDS, WEIGHTS, k=rng.randint(2, 25)))
            for _ in range(rng.randint(1, 3))
        ]
        meta: dict[str, Any] = {
            "year": 2000 + rng.randint(0, 8),
            "kind": rng.choice(["memo", "report", "note"]),
            "tags": rng.sample(["red", "blue", "green"], rng.randint(0, 2)),
            "draft": rng.random() < 0.3,
            "score": round(rng.random(), 3),
        }
        if rng.random() < 0.2:
            del meta["kind"]  # a field some rows lack
        row = DocumentRow(f"d{i}", title, None, f"d{i}", "text", meta, f"h{i}{rng.random()}", "")
        chunks = []
        for j, body in enumerate(bodies):
            vector = np.array([rng.gauss(0, 1) for _ in range(DIMENSION)], np.float32)
            vector /= np.linalg.norm(vector)
            chunks.append(NewChunk(j, 0, len(body), body, None, None, title, body, vector, meta))
        documents.append((row, chunks))
    return WriteBatch(documents=documents, tenant=tenant)


def write(store: SQLiteStore, rng: random.Random, rounds: int, first: int = 0) -> None:
    """Adds, upserts of earlier ids and deletes, spread over the tenants: one version each."""
    for step in range(first, first + rounds):
        tenant = TENANTS[step % len(TENANTS)]
        fresh = list(range(step * 20, step * 20 + 12))
        upserts = rng.sample(range(0, max(1, step * 20)), 4) if step else []
        store.commit(batch(rng, fresh + upserts, tenant))
        if step % 2:
            doomed = [f"d{i}" for i in rng.sample(range(0, step * 20 + 12), 5)]
            store.commit(WriteBatch(delete=doomed, tenant=tenant))


def cached(path: Path, rng: random.Random, rounds: int) -> None:
    """A store at ``path`` with ``rounds`` of writes, closed: its mirror cache saved."""
    store = SQLiteStore(path)
    store.open_dense(DIMENSION, DensePolicy())
    write(store, rng, rounds)
    store.close()


def answers(store: SQLiteStore) -> list[object]:
    """Every arm, every tenant, every servable version, with and without each filter."""
    dense = store.open_dense(DIMENSION, DensePolicy())
    rng = np.random.default_rng(5)
    vectors = rng.normal(size=(3, DIMENSION)).astype(np.float32)
    out: list[object] = []
    for version in [None, *range(store.floor, store.version + 1)]:
        for tenant in TENANTS:
            for filter in [None, *FILTERS]:
                for terms in QUERIES:
                    out.append(store.index.lexical(terms, 10, filter, version, tenant))
                for vector in vectors:
                    out.append(
                        dense.search(vector / np.linalg.norm(vector), 10, filter, version, tenant)
                    )
                if filter is not None:
                    out.append(store.index.filtered_keys(filter, version, tenant).tolist())
    return out


def rebuilt(path: Path) -> list[object]:
    store = SQLiteStore(path, cache=False)
    try:
        return answers(store)
    finally:
        store.close()


@pytest.fixture
def tokenised(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many rows the mirror read and analysed from the file (a cache spares the rest)."""
    counted: list[int] = []
    analyse = _mirror.analysed_rows

    def counting(rows: Any) -> Any:
        counted.append(len(rows))
        return analyse(rows)

    monkeypatch.setattr(_mirror, "analysed_rows", counting)
    return counted


def test_a_store_reopened_from_its_cache_answers_exactly_as_a_rebuild_with_newer_rows(
    tmp_path: Path, tokenised: list[int]
) -> None:
    path = tmp_path / "index.sqlite3"
    rng = random.Random(1)
    cached(path, rng, 6)  # saves the cache
    assert path.with_suffix(".mirror").is_file()
    cached_version = SQLiteStore(path, cache=False)
    write(cached_version, rng, 3, first=6)  # versions the cache does not cover
    newer = cached_version.version
    cached_version.close()
    tokenised.clear()
    reopened = SQLiteStore(path)
    got = answers(reopened)
    assert reopened.version == newer
    replayed = sum(tokenised)
    reopened.close()
    assert got == rebuilt(path)
    total = SQLiteStore(path, cache=False)
    rows = int(total._reader.execute("SELECT count(*) FROM chunks").fetchone()[0])
    total.close()
    assert 0 < replayed < rows / 2  # only the rows past the cache were read


def test_a_reopened_store_keeps_following_new_commits(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite3"
    rng = random.Random(2)
    cached(path, rng, 4)
    reopened = SQLiteStore(path)
    answers(reopened)  # opened from the cache
    write(reopened, rng, 3, first=4)  # appends past the mapped, read-only arrays
    got = answers(reopened)
    reopened.close()
    assert got == rebuilt(path)


def test_a_store_saves_its_cache_in_the_background_while_it_stays_open(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite3"
    store = SQLiteStore(path)
    store.open_dense(DIMENSION, DensePolicy())
    write(store, random.Random(6), 12)  # well past the 200 changed rows that make a save due
    cache = path.with_suffix(".mirror")
    deadline = time.monotonic() + 60
    while not cache.is_file() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert cache.is_file()  # written by the saver thread, the store still open
    second = SQLiteStore(path)  # another process would open this way meanwhile
    got = answers(second)
    second.close()
    store.close()
    assert got == rebuilt(path)


def test_rows_retired_and_collected_after_the_cache_was_saved_are_not_served(
    tmp_path: Path,
) -> None:
    path = tmp_path / "index.sqlite3"
    rng = random.Random(3)
    cached(path, rng, 4)
    other = SQLiteStore(path, cache=False)
    other.commit(WriteBatch(delete=[f"d{i}" for i in range(0, 80)]))
    other.commit(WriteBatch(delete=[f"d{i}" for i in range(0, 80)], tenant="t1"))
    write(other, rng, 2, first=4)
    other.collect(retain=1)  # the deletes' rows leave the file
    other.close()
    reopened = SQLiteStore(path)
    got = answers(reopened)
    reopened.close()
    expected = rebuilt(path)
    # Same rows served everywhere; the rows kept as retired only loosen pruning bounds.
    assert [keys(answer) for answer in got] == [keys(answer) for answer in expected]
    assert flat_scores(got) == pytest.approx(flat_scores(expected), rel=1e-12)


def test_rows_collected_between_the_cache_s_rows_leave_it_usable(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # The vectors are read from the file (issue 51.5): rows the cache holds and the file
    # no longer does, all but its newest, leave the rows read to be moved into place.
    path = tmp_path / "index.sqlite3"
    rng = random.Random(5)
    cached(path, rng, 5)
    other = SQLiteStore(path, cache=False)
    other.commit(WriteBatch(delete=[f"d{i}" for i in range(0, 12)]))
    other.commit(batch(rng, list(range(900, 906)), None))
    assert other.collect(retain=1)  # the deleted rows leave the file
    other.close()
    with caplog.at_level(logging.WARNING, "rcpkit.engine.index._mirror_cache"):
        reopened = SQLiteStore(path)
        got = answers(reopened)
        reopened.close()
    assert "ignoring" not in caplog.text  # taken: its newest row is still the file's
    expected = rebuilt(path)
    assert [keys(answer) for answer in got] == [keys(answer) for answer in expected]
    # The live rows' vectors are the file's bytes, but the collected rows keep their
    # places here and not in a rebuild: a float32 product over a row at another place
    # of the matrix may round otherwise in its last bit (as before issue 51.5).
    assert flat_scores(got) == pytest.approx(flat_scores(expected), rel=1e-6)


def keys(answer: object) -> list[int]:
    assert isinstance(answer, list)
    return [item[0] if isinstance(item, tuple) else item for item in answer]


def flat_scores(got: list[object]) -> list[float]:
    return [item[1] for answer in got for item in answer if isinstance(item, tuple)]  # type: ignore[attr-defined]


def _truncate(cache: Path, elsewhere: Path) -> None:
    data = cache.read_bytes()
    cache.write_bytes(data[: len(data) // 2])


def _flip_a_vector_byte(cache: Path, elsewhere: Path) -> None:
    data = bytearray(cache.read_bytes())
    data[len(data) // 2] ^= 0x40
    cache.write_bytes(bytes(data))


def _not_a_cache(cache: Path, elsewhere: Path) -> None:
    cache.write_bytes(b"PK\x03\x04 some other format" * 100)


def _another_index(cache: Path, elsewhere: Path) -> None:
    other = SQLiteStore(elsewhere / "index.sqlite3")
    other.open_dense(DIMENSION, DensePolicy())
    write(other, random.Random(1), 6)  # the same rows, another file
    other.close()
    shutil.copy(elsewhere / "index.mirror", cache)


def _a_newer_cache_than_the_file(cache: Path, elsewhere: Path) -> None:
    # The SQLite file restored from a copy older than its cache (SQLite's backup API).
    database = cache.with_suffix(".sqlite3")
    saved = elsewhere / "old.sqlite3"
    _copy(database, saved)
    store = SQLiteStore(database)
    store.open_dense(DIMENSION, DensePolicy())
    write(store, random.Random(9), 2, first=20)
    store.close()
    _copy(saved, database)


def _a_diverged_copys(cache: Path, elsewhere: Path) -> None:
    # A copy of the folder that took other writes: the same identity and, here, the
    # same version and the same newest row as this file (issue 34, cache campaign).
    database, copy = cache.with_suffix(".sqlite3"), elsewhere / "index.sqlite3"
    _copy(database, copy)
    for path, seed in ((database, 2), (copy, 3)):
        store = SQLiteStore(path)
        store.open_dense(DIMENSION, DensePolicy())
        store.commit(_one_chunk_each(random.Random(seed), range(900, 920)))
        store.commit(_one_chunk_each(random.Random(99), [999]))  # alike in both
        store.close()
    shutil.copy(elsewhere / "index.mirror", cache)


def _a_format_2_cache_of_other_vectors(cache: Path, elsewhere: Path) -> None:
    # A cache of the format that held the vectors, whose first row's vector is not the
    # file's: never taken, though this rcpkit reads the vectors from the file.
    matrix = _vectors_in_the_file(cache.with_suffix(".sqlite3")).copy()
    matrix[0] = -matrix[0]
    _as_format_2(cache, matrix)


def _one_chunk_each(rng: random.Random, ids: Any) -> WriteBatch:
    documents = []
    for i in ids:
        body = " ".join(rng.choices(WORDS, WEIGHTS, k=12))
        vector = np.array([rng.gauss(0, 1) for _ in range(DIMENSION)], np.float32)
        vector /= np.linalg.norm(vector)
        row = DocumentRow(f"d{i}", "", None, f"d{i}", "text", {}, f"h{i}{body}", "")
        documents.append((row, [NewChunk(0, 0, len(body), body, None, None, "", body, vector, {})]))
    return WriteBatch(documents=documents)


def _copy(source: Path, target: Path) -> None:
    with closing(sqlite3.connect(source)) as read, closing(sqlite3.connect(target)) as into:
        read.backup(into)


@pytest.mark.parametrize(
    "spoil",
    [
        _truncate,
        _flip_a_vector_byte,
        _not_a_cache,
        _another_index,
        _a_newer_cache_than_the_file,
        _a_diverged_copys,
        _a_format_2_cache_of_other_vectors,
    ],
)
def test_a_cache_that_cannot_be_trusted_is_ignored_and_rewritten(
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    spoil: Callable[[Path, Path], None],
) -> None:
    folder, elsewhere = tmp_path / "index", tmp_path / "elsewhere"
    folder.mkdir()
    elsewhere.mkdir()
    path = folder / "index.sqlite3"
    cached(path, random.Random(1), 6)
    cache = path.with_suffix(".mirror")
    spoil(cache, elsewhere)
    with caplog.at_level(logging.WARNING, "rcpkit.engine.index._mirror_cache"):
        reopened = SQLiteStore(path)
        got = answers(reopened)
        reopened.close()
    assert "ignoring the mirror cache" in caplog.text
    assert got == rebuilt(path)
    caplog.clear()
    with caplog.at_level(logging.WARNING, "rcpkit.engine.index._mirror_cache"):
        again = SQLiteStore(path)  # the rewritten cache is valid
        assert answers(again) == got
        again.close()
    assert "ignoring" not in caplog.text


_KILLED = """
import os, random, sys
sys.path.insert(0, sys.argv[2])
from pathlib import Path
from test_engine_mirror_cache import DIMENSION, write
from rcpkit.engine.index.dense import DensePolicy
from rcpkit.engine.store.sqlite import SQLiteStore
store = SQLiteStore(Path(sys.argv[1]))
store.open_dense(DIMENSION, DensePolicy())
write(store, random.Random(4), 3, first=10)
# A save cut short leaves its temporary file; then the process dies before closing.
Path(sys.argv[1]).with_name("index.mirror.99999999.dead.tmp").write_bytes(b"half")
os.kill(os.getpid(), 9)
"""


def test_a_process_killed_between_commits_and_its_save_loses_nothing(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite3"
    cached(path, random.Random(4), 3)
    done = subprocess.run(
        [sys.executable, "-c", _KILLED, str(path), str(Path(__file__).parent)],
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == -9, done.stderr
    reopened = SQLiteStore(path)
    got = answers(reopened)
    reopened.close()  # saves, and clears the dead process's temporary file
    assert got == rebuilt(path)
    assert sorted(file.name for file in tmp_path.glob("index.mirror*")) == ["index.mirror"]


def _served(url: str, cache: Path | None) -> list[object]:
    from rcpkit.engine.store.postgres import PostgresStore

    store = PostgresStore(url, cache=cache)
    try:
        return answers(store)  # type: ignore[arg-type]
    finally:
        store.close()


def test_a_postgres_server_starts_from_its_cache_and_answers_as_one_without(
    postgres_url: str, tmp_path: Path, tokenised: list[int]
) -> None:
    """A server's ``postgres.mirror``: another server's commits since are replayed, no more."""
    import psycopg

    from rcpkit.engine.store.postgres import PostgresStore

    cache = tmp_path / "postgres.mirror"
    rng = random.Random(11)
    first = PostgresStore(postgres_url, cache=cache)
    first.open_dense(DIMENSION, DensePolicy())
    write(first, rng, 6)  # type: ignore[arg-type]
    answers(first)  # type: ignore[arg-type]
    first.close()  # saves the cache
    assert cache.is_file()
    other = PostgresStore(postgres_url)  # another server, committing after the save
    write(other, rng, 3, first=6)  # type: ignore[arg-type]
    newer = other.version
    other.close()
    with psycopg.connect(postgres_url) as connection:
        rows = connection.execute("SELECT count(*) FROM chunks").fetchone()[0]
    tokenised.clear()
    got = _served(postgres_url, cache)
    replayed = sum(tokenised)
    assert got == _served(postgres_url, None)
    assert 0 < replayed < rows / 2  # only the rows past the cache were read
    reopened = PostgresStore(postgres_url, cache=cache)
    assert reopened.version == newer
    reopened.close()


def test_a_postgres_cache_of_another_database_is_ignored(
    postgres_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from rcpkit.engine.store.postgres import PostgresStore

    elsewhere = SQLiteStore(tmp_path / "index.sqlite3")  # the same rows in another index
    elsewhere.open_dense(DIMENSION, DensePolicy())
    write(elsewhere, random.Random(1), 6)
    elsewhere.close()
    store = PostgresStore(postgres_url)
    store.open_dense(DIMENSION, DensePolicy())
    write(store, random.Random(1), 6)  # type: ignore[arg-type]
    store.close()
    cache = tmp_path / "postgres.mirror"
    shutil.copy(tmp_path / "index.mirror", cache)
    with caplog.at_level(logging.WARNING, "rcpkit.engine.index._mirror_cache"):
        got = _served(postgres_url, cache)
    assert "another index's cache" in caplog.text
    assert got == _served(postgres_url, None)


def _vectors_in_the_file(database: Path) -> np.ndarray:
    with closing(sqlite3.connect(database)) as db:
        rows = db.execute("SELECT vector FROM chunks ORDER BY key").fetchall()
    return np.frombuffer(b"".join(row[0] for row in rows), dtype="<f4").reshape(len(rows), -1)


def _as_format_2(cache: Path, matrix: np.ndarray) -> None:
    """Rewrite a cache as rcpkit wrote it before issue 51's footprint: format 2, the
    vectors again in a ``matrix`` section (64-byte aligned, with its CRC)."""
    data = cache.read_bytes()
    trailer = struct.Struct("<8sQQI4x")
    magic, at, length, _crc = trailer.unpack_from(data, len(data) - trailer.size)
    header = json.loads(data[at : at + length])
    del header["vectors"]
    body = bytearray(data[:at])
    body += bytes(-len(body) % 64)
    raw = np.ascontiguousarray(matrix, dtype="<f4").tobytes()
    header["format"] = 2
    header["sections"]["matrix"] = [len(body), "<f4", list(matrix.shape), zlib.crc32(raw)]
    body += raw
    text = json.dumps(header).encode()
    body += text
    body += trailer.pack(magic, len(body) - len(text), len(text), zlib.crc32(text))
    cache.write_bytes(bytes(body))


def test_a_cache_holds_no_vectors_and_one_of_the_format_before_is_used_and_rewritten(
    tmp_path: Path, tokenised: list[int]
) -> None:
    """Issue 51.5: the vectors are SQLite's; the cache held a second float32 copy."""
    path = tmp_path / "index.sqlite3"
    cached(path, random.Random(1), 6)
    cache = path.with_suffix(".mirror")
    matrix = _vectors_in_the_file(path)
    lean = cache.stat().st_size
    _as_format_2(cache, matrix)  # what a cache held before: the vectors again
    assert cache.stat().st_size > lean + matrix.nbytes // 2
    tokenised.clear()
    reopened = SQLiteStore(path)
    got = answers(reopened)
    assert tokenised == []  # taken, not rebuilt: no row was read and analysed again
    reopened.close()  # saved again, in the new format
    assert got == rebuilt(path)
    assert cache.stat().st_size < lean + matrix.nbytes // 2
    tokenised.clear()  # the rebuild's
    again = SQLiteStore(path)
    assert answers(again) == got
    again.close()
    assert tokenised == []


# --- the vectors shared by `serve --workers N`'s workers (index/_shared_vectors.py) ---


@pytest.fixture
def shared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder the stores share their matrix in; this small index counts as large."""
    from rcpkit.engine.index import _mirror_cache

    monkeypatch.setattr(_mirror_cache, "SHARED_MIN_ROWS", 1)
    folder = tmp_path / "shm"
    folder.mkdir()
    return folder


def _mapped(matrix: np.ndarray) -> bool:
    """Whether ``matrix`` is a view of a memory-mapped file (not this process's memory)."""
    base: object = matrix
    while isinstance(base, np.ndarray):
        base = base.base
    return isinstance(base, memoryview) and isinstance(base.obj, mmap.mmap)


def _matrix_of(store: SQLiteStore) -> np.ndarray:
    matrix: np.ndarray = store.open_dense(DIMENSION, DensePolicy()).index.matrix
    return matrix


def test_a_second_store_maps_the_vectors_the_first_read_and_answers_as_a_rebuild(
    tmp_path: Path, shared: Path
) -> None:
    path = tmp_path / "index.sqlite3"
    cached(path, random.Random(3), 6)
    first = SQLiteStore(path, shared_vectors=shared)
    written = _matrix_of(first)
    (vectors,) = shared.glob("vectors-*.f32")  # one file, no temporary left
    second = SQLiteStore(path, shared_vectors=shared)
    mapped = _matrix_of(second)
    assert _mapped(mapped)  # the file's pages
    assert mapped.tobytes() == written.tobytes() == _vectors_in_the_file(path).tobytes()
    assert list(shared.iterdir()) == [vectors]
    assert answers(second) == rebuilt(path)
    first.close()
    second.close()


def test_a_store_without_a_shared_folder_reads_its_own_matrix(tmp_path: Path, shared: Path) -> None:
    path = tmp_path / "index.sqlite3"
    cached(path, random.Random(3), 4)
    store = SQLiteStore(path)
    assert not _mapped(_matrix_of(store))
    store.close()
    assert list(shared.iterdir()) == []


def _header_of(data: bytes) -> dict[str, Any]:
    length = int.from_bytes(data[8:12], "little")
    header: dict[str, Any] = json.loads(data[12 : 12 + length])
    return header


def _damaged(vectors: Path, path: Path) -> None:
    data = bytearray(vectors.read_bytes())
    rows, dimension = _header_of(data)["stamp"]["shape"]
    data[4096 + rows * dimension * 4 - 3] ^= 0xFF  # the last row: its checksum fails
    vectors.write_bytes(bytes(data))


def _other_vectors_checksummed(vectors: Path, path: Path) -> None:
    # Whole and stamped for this cache, but not the file's vectors: the sampled rows
    # compared with SQLite tell.
    data = bytearray(vectors.read_bytes())
    header = _header_of(data)
    count, dimension = header["stamp"]["shape"]
    end = 4096 + count * dimension * 4
    rows = np.frombuffer(bytes(data[4096:end]), dtype="<f4").copy()
    rows[:DIMENSION] = -rows[:DIMENSION]
    header["crc"] = zlib.crc32(rows.tobytes())
    text = json.dumps(header).encode()
    data[12 : 12 + len(text)] = text
    data[8:12] = len(text).to_bytes(4, "little")
    data[4096:end] = rows.tobytes()
    vectors.write_bytes(bytes(data))


def _written_for_an_older_cache(vectors: Path, path: Path) -> None:
    store = SQLiteStore(path)
    store.open_dense(DIMENSION, DensePolicy())
    write(store, random.Random(8), 1, first=6)
    store.close()  # the cache now covers a later version than the shared file


@pytest.mark.parametrize(
    "spoil", [_damaged, _other_vectors_checksummed, _written_for_an_older_cache]
)
def test_shared_vectors_that_do_not_fit_are_ignored_and_replaced(
    tmp_path: Path,
    shared: Path,
    spoil: Callable[[Path, Path], None],
    caplog: pytest.LogCaptureFixture,
) -> None:
    path = tmp_path / "index.sqlite3"
    cached(path, random.Random(3), 6)
    first = SQLiteStore(path, shared_vectors=shared)
    _matrix_of(first)
    first.close()
    (vectors,) = shared.glob("vectors-*.f32")
    spoil(vectors, path)
    caplog.set_level(logging.WARNING)
    store = SQLiteStore(path, shared_vectors=shared)
    got = _matrix_of(store)
    assert got[: len(_vectors_in_the_file(path))].tobytes() == _vectors_in_the_file(path).tobytes()
    if spoil is not _written_for_an_older_cache:
        assert "ignoring the shared vectors" in caplog.text
    assert answers(store) == rebuilt(path)
    store.close()
    again = SQLiteStore(path, shared_vectors=shared)  # the file was written anew: mapped
    assert _matrix_of(again).tobytes() == _vectors_in_the_file(path).tobytes()
    assert _mapped(_matrix_of(again))
    again.close()


def test_a_store_that_follows_commits_keeps_mapping_the_shared_rows(
    tmp_path: Path, shared: Path
) -> None:
    # Appends go to room past the shared rows (an eighth of them), in this process's
    # own pages (a private mapping): a commit does not make each worker copy the whole
    # matrix again; once the room is full, an append does.
    path = tmp_path / "index.sqlite3"
    cached(path, random.Random(3), 6)
    reader = SQLiteStore(path, shared_vectors=shared)
    before = len(_matrix_of(reader))
    (vectors,) = shared.glob("vectors-*.f32")
    written = vectors.read_bytes()
    writer = SQLiteStore(path, cache=False)
    writer.commit(batch(random.Random(4), [5_000], None))  # one to three chunks
    got = answers(reader)  # follows the writer's commit
    after = _matrix_of(reader)
    assert len(after) > before and _mapped(after)
    assert vectors.read_bytes() == written  # the rows appended are this process's own
    assert after.tobytes() == _vectors_in_the_file(path).tobytes()
    assert got == rebuilt(path)
    write(writer, random.Random(4), 2, first=6)  # past the room: copied
    writer.close()
    got = answers(reader)
    assert not _mapped(_matrix_of(reader))
    assert _matrix_of(reader).tobytes() == _vectors_in_the_file(path).tobytes()
    assert got == rebuilt(path)
    reader.close()
    again = SQLiteStore(path, shared_vectors=shared)  # another process's mapping: untouched
    assert _matrix_of(again).tobytes() == _vectors_in_the_file(path).tobytes()
    again.close()
