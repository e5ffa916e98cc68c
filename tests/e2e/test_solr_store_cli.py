"""rcpkit over SolrCloud from the real CLI (issue 48): index, stats, show, delete, serve.

Every test gets a fresh 2-shard collection on the session's local SolrCloud
(two nodes, so each read crosses JVMs); the servers hold no corpus: Solr answers
every lexical, dense and filter read.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.timeout(900)

SAMPLES = Path(str(resources.files("rcpkit") / "samples"))
HASHING = ("--embedder", "hashing:64")


def rcpkit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rcpkit", *args],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def _stats(store: str, index: Path) -> dict[str, Any]:
    done = rcpkit("stats", "--json", "--store", store, "--index", str(index))
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def test_a_folder_is_mirrored_into_solr_and_a_no_op_run_writes_nothing(
    solr_url: str, tmp_path: Path
) -> None:
    folder, index = tmp_path / "docs", tmp_path / "idx"
    shutil.copytree(SAMPLES, folder)
    first = rcpkit("index", str(folder), "--store", solr_url, "--index", str(index), *HASHING)
    assert first.returncode == 0, first.stderr
    assert "indexed          8 documents" in first.stdout
    before = _stats(solr_url, index)
    assert (before["documents"], before["chunks"], before["ingested"]) == (8, 8, 8)

    again = rcpkit("index", str(folder), "--store", solr_url, "--index", str(index), *HASHING)
    assert "unchanged        8 documents" in again.stdout, again.stdout
    assert _stats(solr_url, index)["version"] == before["version"]  # nothing written

    (folder / "bm25.md").unlink()
    (folder / "chunking.md").write_text("# Chunking\n\nSplit documents into windows of text.\n")
    third = rcpkit("index", str(folder), "--store", solr_url, "--index", str(index), *HASHING)
    assert third.returncode == 0, third.stderr
    after = _stats(solr_url, index)
    assert (after["documents"], after["chunks"]) == (7, 7)
    assert after["version"] > before["version"]

    shown = rcpkit("show", "chunking.md", "--store", solr_url, "--index", str(index), *HASHING)
    assert shown.returncode == 0, shown.stderr
    assert "windows of text" in shown.stdout
    gone = rcpkit("delete", "chunking.md", "--store", solr_url, "--index", str(index), *HASHING)
    assert gone.returncode == 0, gone.stderr
    assert _stats(solr_url, index)["documents"] == 6
    missing = rcpkit("show", "bm25.md", "--store", solr_url, "--index", str(index), *HASHING)
    assert missing.returncode == 2 and "Traceback" not in missing.stderr


class Served:
    """``rcpkit serve --stdio`` on the collection, spoken to line by line."""

    def __init__(self, store: str, index: Path) -> None:
        command = [sys.executable, "-m", "rcpkit", "serve", "--stdio", "--engine", "index",
                   "--store", store, "--index", str(index), *HASHING, "--create"]  # fmt: skip
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        self._ids = iter(range(1, 1_000_000))

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        message = {"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": params}
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()
        while True:  # notifications (progress, log) may come first
            reply: dict[str, Any] = json.loads(self.process.stdout.readline())
            if reply.get("id") == message["id"]:
                return reply

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(30)
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()


def _documents() -> list[dict[str, Any]]:
    return [
        {"id": "fox", "text": "the quick brown fox jumps over the lazy dog",
         "meta": {"tag": ["animals", "classic"], "year": 1990, "lang": "en"}},
        {"id": "wing", "text": "lift of a swept wing at high angles of attack",
         "meta": {"tag": ["aero"], "year": 2001, "lang": "en"}},
        {"id": "renard", "text": "le renard brun saute par-dessus le chien",
         "meta": {"tag": ["animals"], "year": 2015, "lang": "fr"}},
    ]  # fmt: skip


def _ids(result: dict[str, Any]) -> list[str]:
    return [hit["id"] for hit in result["result"]["hits"]]


def test_a_server_on_solr_writes_durably_reads_every_arm_and_filters(
    solr_url: str, tmp_path: Path
) -> None:
    server = Served(solr_url, tmp_path / "idx")
    try:
        hello = server.call("initialize", {"protocolVersion": 1})["result"]
        assert hello["capabilities"]["retrieve"].get("snapshots") is not True  # honest
        key = {"_meta": {"idempotencyKey": "batch-1"}}
        added = server.call("index/add", {"documents": _documents(), **key})
        assert "result" in added, added
        again = server.call("index/add", {"documents": _documents(), **key})
        assert again["result"] == added["result"]  # §7.10: the recorded result, nothing new

        for mode in ("sparse", "dense", "hybrid"):
            found = server.call("retrieve", {"query": "brown fox", "k": 3, "mode": mode})
            assert _ids(found)[0] == "fox#0", (mode, found)
        hit = server.call("retrieve", {"query": "swept wing", "k": 1})["result"]["hits"][0]
        assert hit["id"] == "wing#0" and "swept wing" in hit["text"]
        # A document hit is its document's own text (Store.documents_of).
        whole = server.call("retrieve", {"query": "swept wing", "k": 1, "unit": "document"})
        assert whole["result"]["hits"][0]["text"] == _documents()[1]["text"], whole

        def filtered(clause: dict[str, Any], query: str = "brown fox") -> list[str]:
            return _ids(server.call("retrieve", {"query": query, "k": 5, "filter": clause}))

        assert filtered({"field": "lang", "op": "eq", "value": "fr"}) == ["renard#0"]
        assert sorted(filtered({"field": "tag", "op": "contains", "value": "animals"})) == [
            "fox#0", "renard#0",
        ]  # fmt: skip
        assert sorted(filtered({"field": "year", "op": "gte", "value": 2001})) == [
            "renard#0", "wing#0",
        ]  # fmt: skip
        assert filtered({"field": "year", "op": "lt", "value": 2001}) == ["fox#0"]
        assert "fox#0" not in filtered({"field": "lang", "op": "ne", "value": "en"})

        deleted = server.call("index/delete", {"ids": ["fox"]})
        assert "result" in deleted, deleted
        after = server.call("retrieve", {"query": "brown fox", "k": 3, "mode": "sparse"})
        assert "fox#0" not in _ids(after)
    finally:
        server.close()
    # A new server on the same collection sees every acknowledged write.
    other = Served(solr_url, tmp_path / "other")
    try:
        other.call("initialize", {"protocolVersion": 1})
        found = other.call("retrieve", {"query": "swept wing", "k": 3, "mode": "sparse"})
        assert _ids(found)[0] == "wing#0"
    finally:
        other.close()
