"""``rcpkit query --url``: the same retrieve sent to a running ``rcpkit serve --http``."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import pytest
from cli_support import HASHING, rcpkit

from process_support import read_until, stop

SAMPLES = str(resources.files("rcpkit") / "samples")
TOKEN = "query-remote-secret"


def _run(*args: str, token: str | None = None) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    environment.pop("RCPKIT_EMBEDDER", None)
    environment.pop("RCPKIT_TOKEN", None)
    if token is not None:
        environment["RCPKIT_TOKEN"] = token
    return subprocess.run(
        [sys.executable, "-m", "rcpkit", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=environment,
    )


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("remote") / "idx"
    built = rcpkit("index", SAMPLES, "--index", str(folder), *HASHING)
    assert built.returncode == 0, built.stderr
    return folder


@pytest.fixture(scope="module")
def server(index: Path) -> Iterator[str]:
    """``rcpkit serve --http`` on a free port, bearer auth on; yields its base URL."""
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    environment["RCPKIT_HTTP_TOKENS"] = TOKEN
    command = [sys.executable, "-m", "rcpkit", "serve", "--index", str(index), *HASHING]
    command += ["--http", "127.0.0.1:0", "--workers", "1", "--no-ui"]
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=environment
    )
    try:
        match, _ = read_until(process, b"", rb"serving RCP over HTTP on (\S+)", 60.0)
        yield match.group(1).decode()
    finally:
        stop(process)


def _hits(completed: subprocess.CompletedProcess[str]) -> list[tuple[str, str]]:
    assert completed.returncode == 0, completed.stderr
    result = json.loads(completed.stdout)
    return [(hit["id"], hit["citation"]["source"]) for hit in result["hits"]]


def test_query_url_returns_the_hits_of_the_in_process_query(index: Path, server: str) -> None:
    asked = ["reciprocal rank fusion", "-k", "4", "--mode", "hybrid", "--json"]
    local = _hits(rcpkit("query", *asked, "--index", str(index), *HASHING))
    remote = _hits(_run("query", *asked, "--url", server, token=TOKEN))
    assert len(local) == 4
    assert remote == local
    # --server is the same option; --token is the same credential as $RCPKIT_TOKEN.
    again = _hits(_run("query", *asked, "--server", server, "--token", TOKEN))
    assert again == local


def test_query_url_prints_the_same_table_as_the_in_process_query(index: Path, server: str) -> None:
    asked = ["bm25 term saturation", "-k", "2", "--mode", "sparse"]
    local = rcpkit("query", *asked, "--index", str(index), *HASHING)
    remote = _run("query", *asked, "--url", server, token=TOKEN)
    assert remote.returncode == 0, remote.stderr

    def without_latency(text: str) -> list[str]:
        first, *rest = text.splitlines()
        return [first.partition(",")[0], *rest]  # "2 hits (index version 1" + the hits

    assert without_latency(remote.stdout) == without_latency(local.stdout)
    assert "bm25.md" in remote.stdout


def test_query_url_maps_filter_and_token_budget_onto_retrieve(server: str) -> None:
    asked = ["query", "fusion", "-k", "8", "--filter", "path=bm25.md", "--json"]
    filtered = _hits(_run(*asked, "--url", server, token=TOKEN))
    assert filtered and {source for _, source in filtered} == {"bm25.md"}
    asked = ["query", "retrieval", "-k", "8", "--token-budget", "40", "--json"]
    packed = _run(*asked, "--url", server, token=TOKEN)
    assert packed.returncode == 0, packed.stderr
    usage = json.loads(packed.stdout)["usage"]
    assert usage["tokens"] <= 40


def test_query_url_without_the_token_fails_in_one_line(server: str) -> None:
    refused = _run("query", "fusion", "--url", server)
    assert refused.returncode == 1
    assert refused.stdout == ""
    assert len(refused.stderr.strip().splitlines()) == 1
    assert "-32012" in refused.stderr  # §5.2: 401 mirrors Unauthorized


def test_query_url_names_a_server_it_cannot_reach_in_one_line() -> None:
    with socket.socket() as probe:  # a port that was free a moment ago and has no listener
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/rcp"
    failed = _run("query", "fusion", "--url", url)
    assert failed.returncode == 1
    lines = failed.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"rcpkit query: cannot reach {url}: ")
    assert "Traceback" not in failed.stderr


def test_query_url_waits_its_timeout_for_the_initialize_answer() -> None:
    """A server busy loading its model stack (issue 51: 10-11 s to answer initialize on
    a loaded machine) is waited for as long as ``--timeout`` says, not a fixed 10 s."""
    with socket.socket() as silent:  # the kernel completes connections; nobody answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/rcp"
        failed = _run("query", "fusion", "--url", url, "--timeout", "12")
    assert failed.returncode == 1
    assert "no initialize answer within 12 s" in failed.stderr, failed.stderr


def test_query_url_refuses_engine_options_it_would_ignore(tmp_path: Path) -> None:
    refused = _run("query", "x", "--url", "http://127.0.0.1:9/rcp", "--index", str(tmp_path))
    assert refused.returncode == 2
    assert "--index" in refused.stderr and "--url" in refused.stderr
