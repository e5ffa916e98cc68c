"""The write path and the footprint: ``rcpkit.open(...).add`` against LanceDB ``table.add``.

    python benchmarks/write_footprint.py [--chunks 100000] [--batch 5000] [--profile FILE]
                                         [--floors]

Issue 51 item 5: add ≤ 2× LanceDB's insert time for the same vectors, bytes on
disk per chunk ≤ 2× LanceDB's, in one run. Both get the same real-text chunks
(``rcpkit_bench._real_text``: Cranfield passages, then the prose of this
Python's installed modules; the script refuses with the count found when there
are fewer than ``--chunks``) and the same precomputed vectors (LSA of the
chunks, ``library_peers._lsa``; kept in ``CACHE``), in the same batches.

Timed: rcpkit's ``add`` calls (each one commit; they include its lexical index
and its in-memory mirror) and its ``close`` (which saves the mirror beside the
file); LanceDB's ``create_table``/``table.add`` calls, and its full-text index
build (``create_index(FTS)``) apart, since rcpkit's add includes its own.
Bytes: every file under each folder after close (LanceDB's with its FTS index).
``--profile FILE``: rcpkit's adds under cProfile, the stats saved to FILE.
``--floors``: the parts of an add timed alone (``_floors``), against LanceDB's add.
"""

from __future__ import annotations

import argparse
import cProfile
import importlib.util
import json
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

import rcpkit
from rcpkit_bench import _real_text
from rcpkit_bench.report import BenchUnavailable

CACHE = Path(tempfile.gettempdir()) / "rcpkit-write-footprint"
DIMENSION = 384  # MiniLM's, the default model's


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=5_000, help="chunks per add call")
    parser.add_argument("--profile", type=Path, help="save cProfile stats of rcpkit's adds")
    parser.add_argument(
        "--floors", action="store_true", help="also time the parts of an add alone (see _floors)"
    )
    args = parser.parse_args()
    try:
        texts, vectors = _cached(args.chunks)
    except BenchUnavailable as error:
        sys.exit(f"write_footprint: {error}")
    print(f"{len(texts):,} real-text chunks, LSA vectors of {vectors.shape[1]}", flush=True)
    ids = [f"c{n}" for n in range(len(texts))]
    with tempfile.TemporaryDirectory(prefix="rcpkit-write-") as folder:
        ours = _rcpkit(Path(folder) / "rcpkit", ids, texts, vectors, args.batch, args.profile)
        theirs = _lancedb(Path(folder) / "lance", ids, texts, vectors, args.batch)
    count = len(texts)
    print(f"{'':<28} {'rcpkit':>10} {'LanceDB':>10} {'ratio':>7}")
    for name in ("add", "close", "full-text index"):
        mine, peer = ours.get(name, 0.0), theirs.get(name, 0.0)
        print(f"{name + ' (s)':<28} {mine:10.2f} {peer:10.2f}", end="")
        print(f" {mine / peer:6.2f}x" if peer and mine else "")
    mine_add = ours["add"] + ours["close"]
    peer_add = theirs["add"] + theirs["full-text index"]
    both = f"{mine_add:10.2f} {peer_add:10.2f} {mine_add / peer_add:6.2f}x"
    print(f"{'add+close / add+FTS (s)':<28} {both}")
    print(f"{'add / add (target ≤ 2x)':<28} {'':>21} {ours['add'] / theirs['add']:6.2f}x")
    mine_b, peer_b = ours["bytes"] / count, theirs["bytes"] / count
    print(f"{'bytes per chunk':<28} {mine_b:10,.0f} {peer_b:10,.0f} {mine_b / peer_b:6.2f}x")
    print(f"{'  (LanceDB without FTS)':<28} {'':>10} {theirs['bytes data'] / count:10,.0f}")
    print("rcpkit's files:", json.dumps(ours["files"]))
    if args.floors:
        with tempfile.TemporaryDirectory(prefix="rcpkit-floors-") as folder:
            for name, took in _floors(Path(folder), ids, texts, vectors, args.batch).items():
                print(f"{name:<44} {took:6.2f} s {took / theirs['add']:6.2f}x LanceDB's add")


def _cached(size: int) -> tuple[list[str], Any]:
    """(chunks, their LSA vectors), from CACHE or made and kept there."""
    folder = CACHE / str(size)
    if (folder / "vectors.npy").exists():
        return json.loads((folder / "chunks.json").read_text()), np.load(folder / "vectors.npy")
    texts = _real_text.chunks(size)
    vectors, _ = _peers_module()._lsa(texts, [], DIMENSION)
    # A chunk none of whose words is in two chunks has no LSA direction; rcpkit
    # refuses a zero vector, so it gets a unit one (the same for LanceDB).
    vectors[np.linalg.norm(vectors, axis=1) == 0, 0] = 1.0
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "chunks.json").write_text(json.dumps(texts))
    np.save(folder / "vectors.npy", vectors)  # last: its presence says the rest is whole
    return texts, vectors


def _peers_module() -> Any:
    """``benchmarks/library_peers.py`` (for its LSA): benchmarks/ is not a package."""
    path = Path(__file__).with_name("library_peers.py")
    spec = importlib.util.spec_from_file_location("library_peers", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _rcpkit(
    folder: Path, ids: list[str], texts: list[str], vectors: Any, batch: int, profile: Path | None
) -> dict[str, Any]:
    index = rcpkit.open(folder, create=True, vectors=vectors.shape[1])
    profiler = cProfile.Profile() if profile else None
    took = 0.0
    for start in range(0, len(ids), batch):
        part = slice(start, start + batch)
        documents = [{"id": i, "text": t} for i, t in zip(ids[part], texts[part], strict=True)]
        begun = time.perf_counter()
        if profiler is not None:
            profiler.enable()
        index.add(documents, vectors=vectors[part])
        if profiler is not None:
            profiler.disable()
        took += time.perf_counter() - begun
    begun = time.perf_counter()
    index.close()
    closed = time.perf_counter() - begun
    if profiler is not None and profile is not None:
        profiler.dump_stats(profile)
    files = {path.name: path.stat().st_size for path in folder.rglob("*") if path.is_file()}
    return {"add": took, "close": closed, "bytes": sum(files.values()), "files": files}


def _lancedb(
    folder: Path, ids: list[str], texts: list[str], vectors: Any, batch: int
) -> dict[str, float]:
    import lancedb
    import pyarrow as pa
    from lancedb.index import FTS

    db = lancedb.connect(str(folder))
    table = None
    took = 0.0
    for start in range(0, len(ids), batch):
        part = slice(start, start + batch)
        rows = pa.table(
            {
                "id": ids[part],
                "text": texts[part],
                "vector": pa.FixedSizeListArray.from_arrays(
                    pa.array(vectors[part].astype(np.float32).ravel()), vectors.shape[1]
                ),
            }
        )
        begun = time.perf_counter()
        if table is None:
            table = db.create_table("chunks", rows)
        else:
            table.add(rows)
        took += time.perf_counter() - begun
    assert table is not None
    data = _size(folder)
    begun = time.perf_counter()
    table.create_index("text", config=FTS())
    indexed = time.perf_counter() - begun
    return {"add": took, "full-text index": indexed, "bytes": _size(folder), "bytes data": data}


def _floors(
    folder: Path, ids: list[str], texts: list[str], vectors: Any, batch: int
) -> dict[str, float]:
    """What the parts of rcpkit's add cost alone, in the same batches: the analysis of
    the texts (terms and vocabulary words), and into files with rcpkit's schema and
    settings (WAL, ``synchronous=FULL``, 16 KB pages) a transaction per batch of the
    chunk and document rows alone, then of FTS5's rows of the analysed terms alone.
    A lexical index built at add time costs at least the first and the last."""
    from rcpkit.engine.store.sqlite.schema import SCHEMA
    from rcpkit.engine.text.analysis import analyze_with_words

    begun = time.perf_counter()
    bodies = [" ".join(terms) for terms in analyze_with_words(texts)[0]]
    analysed = time.perf_counter() - begun
    meta = json.dumps({"modality": "text"})
    rows_sql = (
        "INSERT INTO documents (doc_key, tenant, doc_id, source, modality, meta, content_hash,"
        " text, origin, added) VALUES (?, '', ?, ?, 'text', '{}', '', '', 'index/add', 1)",
        'INSERT INTO chunks (key, doc_key, tenant, doc_id, idx, start, "end", text,'
        " filter_meta, vector, added) VALUES (?, ?, '', ?, 0, 0, ?, ?, ?, ?, 1)",
    )

    def rows(part: slice) -> None:
        keys = range(part.start + 1, part.start + 1 + len(ids[part]))
        documents = [(key, doc_id, doc_id) for key, doc_id in zip(keys, ids[part], strict=True)]
        blobs = vectors[part].astype("<f4")
        chunks = [
            (key, key, doc_id, len(text), text, meta, blob.tobytes())
            for key, doc_id, text, blob in zip(keys, ids[part], texts[part], blobs, strict=True)
        ]
        connection.executemany(rows_sql[0], documents)
        connection.executemany(rows_sql[1], chunks)

    def terms(part: slice, table: str = "chunks_fts (rowid, title, body)") -> None:
        keys = range(part.start + 1, part.start + 1 + len(ids[part]))
        rows = [(key, "", body) for key, body in zip(keys, bodies[part], strict=True)]
        connection.executemany(f"INSERT INTO {table} VALUES (?, ?, ?)", rows)

    def plain(part: slice) -> None:  # what FTS5's content table alone costs
        terms(part, "plain (id, c0, c1)")

    took = {"analysis alone (terms and vocabulary words)": analysed}
    for name, insert in (
        ("SQLite rows alone (chunks, documents)", rows),
        ("FTS5 insert alone", terms),
        ("  the same terms in a plain table", plain),
    ):
        connection = sqlite3.connect(folder / f"{insert.__name__}.sqlite3", isolation_level=None)
        for pragma in ("page_size = 16384", "journal_mode = WAL", "synchronous = FULL"):
            connection.execute(f"PRAGMA {pragma}")
        connection.executescript(SCHEMA + "CREATE TABLE plain (id INTEGER PRIMARY KEY, c0, c1);")
        begun = time.perf_counter()
        for start in range(0, len(ids), batch):
            connection.execute("BEGIN IMMEDIATE")
            insert(slice(start, start + batch))
            connection.execute("COMMIT")
        took[name] = time.perf_counter() - begun
        connection.close()
    return took


def _size(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


if __name__ == "__main__":
    main()
