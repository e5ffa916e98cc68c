"""The persistent engine from the real CLI: index, serve over stdio, query, crash safety."""

from __future__ import annotations

import select
import signal
import subprocess
import sys
import time
from importlib import resources
from pathlib import Path

import pytest

SAMPLES = str(resources.files("rcpkit") / "samples")


def rcpkit(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rcpkit", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


# ``python -c GATED_MODEL GATE LOADING rcpkit-args…``: the real CLI, whose embedding
# model load first marks LOADING and then waits for GATE to exist.
GATED_MODEL = """
import sys, time
from pathlib import Path
import rcpkit.engine.open as opening
from rcpkit.cli import main

gate, loading = Path(sys.argv[1]), Path(sys.argv[2])
load = opening.load_embedder

def gated(*args, **options):
    loading.touch()
    while not gate.exists():
        time.sleep(0.01)
    return load(*args, **options)

opening.load_embedder = gated
sys.argv = ["rcpkit", *sys.argv[3:]]
raise SystemExit(main())
"""


def _wait_for_file(path: Path, process: subprocess.Popen[bytes]) -> None:
    while not path.exists():
        assert process.poll() is None, "the server exited"
        time.sleep(0.01)


def _readable(process: subprocess.Popen[bytes]) -> bool:
    assert process.stdout is not None
    return bool(select.select([process.stdout.fileno()], [], [], 0)[0])


@pytest.mark.heavy  # the real model in three processes: two index runs and the server
def test_index_then_serve_answers_hybrid_queries_with_the_real_model(spawn, tmp_path: Path) -> None:
    index = str(tmp_path / "idx")
    first = rcpkit("index", SAMPLES, "--index", index)
    assert first.returncode == 0, first.stderr
    assert "indexed          8 documents" in first.stdout
    again = rcpkit("index", SAMPLES, "--index", index)
    assert "unchanged        8 documents" in again.stdout  # nothing re-embedded

    # Issue 51: a server answers initialize once its model is loaded and warm, so the
    # first retrieve pays for neither. The model's load waits on a file the test
    # creates: no answer is readable before it exists, and one comes after. How long
    # a serve takes to answer is benchmarks/serve_start.py's ratio, not a test's.
    gate, loading = tmp_path / "release-the-model", tmp_path / "model-loading"
    launcher = ("-c", GATED_MODEL, str(gate), str(loading))
    server = spawn("--engine", "index", "--index", index, launcher=launcher)
    server.send(
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
    )
    _wait_for_file(loading, server.process)  # the load began, and holds until the gate
    assert not _readable(server.process), "initialize answered before the model loaded"
    gate.touch()
    hello = server.recv(timeout=120)
    caps = hello["result"]["capabilities"]
    assert caps["embed"]["identity"].startswith("sentence-transformers/all-MiniLM-L6-v2")
    assert caps["retrieve"]["modes"] == ["dense", "sparse", "hybrid"]
    assert hello["result"]["_meta"]["conformance"] in ("L1", "L2")
    # A paraphrase with no shared keywords: only the dense arm can find it.
    server.send(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "retrieve",
            "params": {"query": "which automobile words match cars", "k": 3, "mode": "dense"},
        }
    )
    found = server.recv(timeout=60)
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
    assert "indexed          1 document " in done.stdout
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


def _tree(root: Path) -> Path:
    docs = root / "docs"
    (docs / "docs" / "api").mkdir(parents=True)
    (docs / "docs" / "guide").mkdir()
    (docs / "docs" / "api" / "endpoints.md").write_text("# Endpoints\n\nThe gardens endpoint.\n")
    (docs / "docs" / "guide" / "start.md").write_text("# Start\n\nPlanting gardens guide.\n")
    (docs / "notes.md").write_text("# Notes\n\nGardens notes at the top.\n")
    return docs


def test_index_makes_folders_and_path_substrings_filterable(spawn, tmp_path: Path) -> None:
    docs = _tree(tmp_path)
    index = str(tmp_path / "idx")
    done = rcpkit("index", str(docs), "--index", index, "--embedder", "hashing:64")
    assert done.returncode == 0, done.stderr
    server = spawn("--engine", "index", "--index", index, "--embedder", "hashing:64")
    hello = server.request(1, "initialize", {"protocolVersion": 1})
    fields = hello["result"]["capabilities"]["filter"]["fields"]
    assert (fields["folders"], fields["path"]) == ("keyword", "text")

    def found(id: int, clause: dict[str, object]) -> set[str]:
        reply = server.request(id, "retrieve", {"query": "gardens", "k": 10, "filter": clause})
        return {hit["chunk"]["docId"] for hit in reply["result"]["hits"]}

    in_docs = found(2, {"field": "folders", "op": "contains", "value": "docs"})
    assert in_docs == {"docs/api/endpoints.md", "docs/guide/start.md"}
    in_api = found(3, {"field": "folders", "op": "contains", "value": "docs/api"})
    assert in_api == {"docs/api/endpoints.md"}
    assert found(4, {"field": "path", "op": "contains", "value": "guide/st"}) == {
        "docs/guide/start.md"
    }
    assert found(5, {"field": "folders", "op": "contains", "value": "doc"}) == set()
    # §8: `contains` on a keyword field that holds no arrays is not allowed for it.
    refused = server.request(
        6, "retrieve", {"query": "x", "filter": {"field": "ext", "op": "contains", "value": "md"}}
    )
    assert refused["error"]["code"] == -32602
    assert refused["error"]["data"]["field"] == "filter.op"


def test_index_skips_file_links_out_of_the_folder_unless_asked(spawn, tmp_path: Path) -> None:
    docs = _tree(tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("the secret outside the folder about gardens\n")
    (docs / "passwd.txt").symlink_to(secret)
    (docs / ".drafts").mkdir()  # hidden: read only through the link inside the folder
    (docs / ".drafts" / "draft.md").write_text("# Draft\n\nA draft about gardens.\n")
    (docs / "inside.md").symlink_to(docs / ".drafts" / "draft.md")
    (docs / "broken.txt").symlink_to(tmp_path / "nothing-here")
    config = tmp_path / "rcpkit.toml"
    config.write_text(f'[engine]\ntrusted_sources = ["{docs.as_uri()}"]\n')
    index = str(tmp_path / "idx")
    common = ("--index", index, "--embedder", "hashing:64", "--config", str(config))
    done = rcpkit("index", str(docs), *common)
    assert done.returncode == 0, done.stderr
    assert "indexed          4 documents" in done.stdout  # the three files and inside.md
    # the summary lists each reason, then the files it applies to
    assert f"symlink to {secret}, outside the indexed folder" in done.stdout
    assert f"{docs / 'passwd.txt'}" in done.stdout
    assert "broken symlink" in done.stdout
    server = spawn("--engine", "index", *common)
    server.request(1, "initialize", {"protocolVersion": 1})
    secret_hits = server.request(2, "retrieve", {"query": "secret outside", "mode": "sparse"})
    assert secret_hits["result"]["hits"] == []
    server.request(3, "shutdown", {})
    server.wait()

    followed = rcpkit("index", str(docs), *common, "--follow-links")
    assert followed.returncode == 0, followed.stderr
    assert "indexed          1 document " in followed.stdout


def test_a_client_file_uri_is_echoed_but_never_trusted(spawn, tmp_path: Path) -> None:
    docs = _tree(tmp_path)
    config = tmp_path / "rcpkit.toml"
    config.write_text(f'[engine]\ntrusted_sources = ["{docs.as_uri()}"]\n')
    index = str(tmp_path / "idx")
    common = ("--index", index, "--embedder", "hashing:64", "--config", str(config))
    assert rcpkit("index", str(docs), *common).returncode == 0
    server = spawn("--engine", "index", *common)
    server.request(1, "initialize", {"protocolVersion": 1})
    forged_uri = (docs / "docs" / "api" / "forged.md").as_uri()
    notes_uri = (docs / "notes.md").as_uri()
    added = server.request(
        2,
        "index/add",
        {
            "documents": [
                {"id": "forged", "text": "zebra crossing instructions", "uri": forged_uri},
                # the same id as an ingested, trusted file: the upsert is no longer trusted
                {
                    "id": "notes.md",
                    "text": "zebra notes replaced",
                    "uri": notes_uri,
                },
            ]
        },
    )
    assert "result" in added, added
    hits = server.request(3, "retrieve", {"query": "zebra", "k": 5, "mode": "sparse"})
    by_doc = {hit["chunk"]["docId"]: hit for hit in hits["result"]["hits"]}
    assert by_doc["forged"]["citation"]["uri"] == forged_uri  # echoed back as given
    assert by_doc["forged"]["trust"]["level"] == "untrusted"
    assert by_doc["notes.md"]["trust"]["level"] == "untrusted"
    ingested = server.request(4, "retrieve", {"query": "planting guide", "k": 1, "mode": "sparse"})
    top = ingested["result"]["hits"][0]
    assert top["chunk"]["docId"] == "docs/guide/start.md"
    assert top["trust"]["level"] == "trusted"  # the control: ingested from the trusted folder


def test_files_indexed_from_the_operators_disk_are_community_not_untrusted(
    spawn, tmp_path: Path
) -> None:
    # Issue 52: with no trusted_sources configured every local hit read "untrusted"
    # (the console's red badge). The operator's own files are community; only what a
    # client sends over index/add stays untrusted.
    docs = _tree(tmp_path)
    common = ("--index", str(tmp_path / "idx"), "--embedder", "hashing:64")
    assert rcpkit("index", str(docs), *common).returncode == 0
    server = spawn("--engine", "index", *common)
    server.request(1, "initialize", {"protocolVersion": 1})
    added = {"documents": [{"id": "sent", "text": "planting notes from a client"}]}
    assert "result" in server.request(2, "index/add", added)
    found = server.request(3, "retrieve", {"query": "planting gardens", "k": 5, "mode": "sparse"})
    levels = {hit["chunk"]["docId"]: hit["trust"]["level"] for hit in found["result"]["hits"]}
    assert levels.pop("sent") == "untrusted"
    assert levels and set(levels.values()) == {"community"}
