"""The persistent engine from the real CLI: index, serve over stdio, query, crash safety."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from importlib import resources
from pathlib import Path

SAMPLES = str(resources.files("rcpkit") / "samples")


def rcpkit(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rcpkit", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_index_then_serve_answers_hybrid_queries_with_the_real_model(spawn, tmp_path: Path) -> None:
    index = str(tmp_path / "idx")
    first = rcpkit("index", SAMPLES, "--index", index)
    assert first.returncode == 0, first.stderr
    assert "indexed          8 documents" in first.stdout
    again = rcpkit("index", SAMPLES, "--index", index)
    assert "unchanged        8 documents" in again.stdout  # nothing re-embedded

    server = spawn("--engine", "index", "--index", index)
    started = time.monotonic()
    hello = server.request(1, "initialize", {"protocolVersion": 1})
    assert time.monotonic() - started < 5
    caps = hello["result"]["capabilities"]
    assert caps["embed"]["identity"].startswith("sentence-transformers/all-MiniLM-L6-v2")
    assert caps["retrieve"]["modes"] == ["dense", "sparse", "hybrid"]
    assert hello["result"]["_meta"]["conformance"] in ("L1", "L2")
    # A paraphrase with no shared keywords: only the dense arm can find it.
    found = server.request(
        2, "retrieve", {"query": "which automobile words match cars", "k": 3, "mode": "dense"}
    )
    assert found["result"]["hits"][0]["chunk"]["docId"] in (
        "bm25.md",
        "dense-retrieval.md",
        "learned-sparse.md",
    )
    hybrid = server.request(
        3,
        "retrieve",
        {"query": "late interaction MaxSim over token vectors", "k": 3, "mode": "hybrid"},
    )
    top = hybrid["result"]["hits"][0]
    assert top["chunk"]["docId"] == "reranking.md"
    assert top["citation"]["uri"].startswith("file://")
    assert server.request(4, "shutdown", {})["result"] == {}
    assert server.wait() == 0


def test_query_prints_a_table_with_citations(tmp_path: Path) -> None:
    index = str(tmp_path / "idx")
    assert rcpkit("index", SAMPLES, "--index", index).returncode == 0
    shown = rcpkit("query", "prompt injection in retrieved text", "--index", index, "-k", "2")
    assert shown.returncode == 0, shown.stderr
    assert "prompt-injection.md" in shown.stdout
    bad = rcpkit(
        "query", "x", "--index", index, "--filter", '{"field": "nope", "op": "eq", "value": 1}'
    )
    assert bad.returncode == 1
    assert "-32602" in bad.stderr


def test_index_reports_skipped_files_and_missing_paths(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "good.md").write_text("# Good\n\nSome text about gardens.\n")
    (folder / "blob.bin").write_bytes(b"\x00\x01\x02" * 100)
    (folder / "empty.txt").write_text("   \n")
    done = rcpkit("index", str(folder), "--index", str(tmp_path / "idx"))
    assert done.returncode == 0, done.stderr
    assert "indexed          1 documents" in done.stdout
    assert "skipped          2 files" in done.stdout
    missing = rcpkit("index", str(tmp_path / "nope"), "--index", str(tmp_path / "idx"))
    assert missing.returncode == 2
    assert "no such file" in missing.stderr


def test_a_killed_server_loses_nothing_acknowledged(spawn, tmp_path: Path) -> None:
    index = str(tmp_path / "idx")
    server = spawn("--engine", "index", "--index", index, "--create", "--embedder", "hashing:64")
    server.request(1, "initialize", {"protocolVersion": 1})
    acknowledged = server.request(
        2, "index/add", {"documents": [{"id": "kept", "text": "acknowledged before the crash"}]}
    )
    assert "result" in acknowledged
    big = [{"id": f"d{i}", "text": f"document number {i} " * 50} for i in range(3000)]
    server.send({"jsonrpc": "2.0", "id": 3, "method": "index/add", "params": {"documents": big}})
    time.sleep(0.3)
    server.process.send_signal(signal.SIGKILL)
    server.wait()
    reopened = spawn("--engine", "index", "--index", index, "--embedder", "hashing:64")
    reopened.request(1, "initialize", {"protocolVersion": 1})
    kept = reopened.request(2, "retrieve", {"query": "acknowledged crash", "mode": "sparse"})
    assert [hit["id"] for hit in kept["result"]["hits"]] == ["kept#0"]
    partial = reopened.request(
        3, "retrieve", {"query": "document number", "k": 5, "mode": "sparse"}
    )
    # The interrupted batch is all or nothing.
    count = len(partial["result"]["hits"])
    assert count in (0, 5)
