"""The embedded store's mirror cache from the real CLI: index, query, spoil the cache, query."""

from __future__ import annotations

import itertools
import json
import shutil
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from cli_support import HASHING, rcpkit

SAMPLES = Path(str(resources.files("rcpkit") / "samples"))
QUERIES = ("token vectors late interaction", "cosine similarity of passages")
MODES = ("dense", "sparse", "hybrid")
INITIALIZE = {"protocolVersion": 1}
STARTUP = 60.0  # a bound on a process start under load, not an expected time


def hits(spawn: Any, index: Path) -> list[object]:
    """Every mode's hits (keys, scores, confidences) for the queries, as the RCP result.

    One ``rcpkit serve`` process per state of the cache: like ``rcpkit query`` it reads
    the cache (or rebuilds it) when it opens the index and saves it when it closes; one
    `query` process per query and mode cost 24 engine loads a test."""
    server = spawn("--engine", "index", "--index", str(index), *HASHING)
    server.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INITIALIZE})
    assert "result" in server.recv(timeout=STARTUP)
    out: list[object] = []
    for number, (query, mode) in enumerate(itertools.product(QUERIES, MODES), start=1):
        answer = server.request(number, "retrieve", {"query": query, "mode": mode, "k": 5})
        result = answer["result"]
        result.pop("usage", None)  # timings
        out.append(result)
    assert server.request(number + 1, "shutdown")["result"] == {}
    server.close_stdin()
    assert server.wait(STARTUP) == 0
    return out


# Four servers and two index runs, each loading the engine: over the suite's 60 s
# default when the machine is busy.
@pytest.mark.timeout(300)
def test_queries_answer_the_same_from_the_cache_a_spoiled_cache_and_newer_documents(
    spawn: Any, tmp_path: Path
) -> None:
    index, docs = tmp_path / "idx", tmp_path / "docs"
    shutil.copytree(SAMPLES, docs)
    (docs / "late.md").unlink(missing_ok=True)
    first = rcpkit("index", str(docs), "--index", str(index), *HASHING)
    assert first.returncode == 0, first.stderr
    cache = index / "index.mirror"
    assert cache.is_file()  # written when the indexer closed
    cached = hits(spawn, index)
    cache.write_bytes(cache.read_bytes()[:100])  # torn
    assert hits(spawn, index) == cached
    assert cache.stat().st_size > 100  # rebuilt and saved again on close
    # Documents indexed by another process after the cache was written are read back.
    (docs / "late.md").write_text("# Late interaction\n\nToken vectors scored by MaxSim late.\n")
    saved = cache.read_bytes()
    more = rcpkit("index", str(docs), "--index", str(index), *HASHING)
    assert more.returncode == 0, more.stderr
    cache.write_bytes(saved)  # the cache of before the new document: replayed past
    replayed = hits(spawn, index)
    cache.unlink()
    assert hits(spawn, index) == replayed  # a rebuild from SQLite alone
    assert any("late.md" in json.dumps(result) for result in replayed)


def test_a_server_saves_its_mirror_when_it_shuts_down(spawn: object, tmp_path: Path) -> None:
    # Issue 34 (cache campaign): `rcpkit serve` never closed its engine, so a server's
    # mirror was saved only by the background saver, and never by a short-lived one.
    index = tmp_path / "idx"
    server = spawn("--engine", "index", "--index", str(index), *HASHING, "--create")  # type: ignore[operator]
    assert "result" in server.request(1, "initialize", {"protocolVersion": 1})
    documents = [{"id": f"d{i}", "text": f"document {i} about mirrors"} for i in range(5)]
    assert "result" in server.request(2, "index/add", {"documents": documents})
    assert "result" in server.request(3, "retrieve", {"query": "mirrors", "mode": "dense"})
    assert server.request(4, "shutdown")["result"] == {}
    server.close_stdin()
    assert server.wait(30) == 0
    assert (index / "index.mirror").is_file()
