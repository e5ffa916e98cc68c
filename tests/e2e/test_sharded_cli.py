"""Issue 32 end to end: `rcpkit db shards`, `rcpkit index`, a registry grown from two
PostgreSQL servers to three and rebalanced, and two `rcpkit serve --http` processes on
it, with the real default model."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from cli_support import rcpkit
from pg_support import own_server

from process_support import read_until, stop
from rcpkit.engine.store.postgres.pgserver import PostgresServer

SAMPLES = Path(__file__).resolve().parents[2] / "src" / "rcpkit" / "samples"


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[Path]:
    servers: list[PostgresServer] = []
    try:
        for _ in range(3):
            servers.append(own_server())
            with psycopg.connect(servers[-1].url(), autocommit=True) as connection:
                connection.execute("CREATE DATABASE rcpkit")
        path = tmp_path / "shards.toml"
        path.write_text(_entries(servers[:2]))
        (tmp_path / "grown.toml").write_text(_entries(servers))
        yield path
    finally:
        for server in servers:
            server.stop()


def _entries(servers: list[PostgresServer]) -> str:
    return "".join(
        f'[[shard]]\nname = "s{n}"\nurl = "{server.url("rcpkit")}"\n'
        for n, server in enumerate(servers)
    )


class Server:
    def __init__(self, registry: Path, index: Path, *extra: str) -> None:
        command = [
            sys.executable, "-m", "rcpkit", "serve", "--http", "127.0.0.1:0",
            "--store", str(registry), "--index", str(index),
            "--allow-unauthenticated-writes",  # loopback only: the test writes through it
            *extra,
        ]  # fmt: skip
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        match, _ = read_until(self.process, b"", rb"serving RCP over HTTP on (\S+)", 60.0)
        self.url = match.group(1).decode()

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        reply = httpx.post(f"{self.url}/{method}", json=body, timeout=60).json()
        assert "result" in reply, reply
        result: dict[str, Any] = reply["result"]
        return result


@pytest.mark.timeout(300)
def test_a_registry_of_two_shards_is_indexed_and_served_by_two_servers(
    registry: Path, tmp_path: Path
) -> None:
    done = rcpkit("db", "shards", "init", "--store", str(registry))
    assert done.returncode == 0, done.stderr
    assert "s0: schema version" in done.stdout and "catalog: s0 (2 shards)" in done.stdout

    index = ("--store", str(registry), "--index", str(tmp_path / "i"), "--graph", "regex")
    done = rcpkit("index", str(SAMPLES), *index)
    assert done.returncode == 0, done.stderr
    samples = len(list(SAMPLES.glob("*.md")))

    done = rcpkit("db", "shards", "status", "--store", str(registry))
    assert done.returncode == 0, done.stdout + done.stderr
    counts = [int(n) for n in re.findall(r"(\d+) documents", done.stdout)]
    assert len(counts) == 2 and sum(counts) == samples and min(counts) > 0, done.stdout

    # A third shard: the registry grows, status finds the documents it homes elsewhere,
    # rebalance moves them, and a second rebalance has nothing left to do.
    registry.write_text((tmp_path / "grown.toml").read_text())
    assert rcpkit("db", "shards", "init", "--store", str(registry)).returncode == 0
    done = rcpkit("db", "shards", "status", "--store", str(registry))
    assert done.returncode == 1 and "whose home is another shard" in done.stdout, done.stdout
    # The chunks a move re-keys are in the knowledge graph: rebalance needs its extractor.
    done = rcpkit("db", "shards", "rebalance", "--store", str(registry))
    assert done.returncode != 0 and "pass the servers' --graph" in done.stderr, done.stderr
    done = rcpkit("db", "shards", "rebalance", "--store", str(registry), "--graph", "regex")
    assert done.returncode == 0 and "moved" in done.stdout, done.stdout + done.stderr
    done = rcpkit("db", "shards", "status", "--store", str(registry))
    assert done.returncode == 0, done.stdout
    counts = [int(n) for n in re.findall(r"(\d+) documents", done.stdout)]
    assert len(counts) == 3 and sum(counts) == samples, done.stdout
    done = rcpkit("db", "shards", "rebalance", "--store", str(registry), "--graph", "regex")
    assert "every document is on its home shard" in done.stdout, done.stdout

    servers: list[Server] = []
    try:
        servers = [
            Server(registry, tmp_path / "a", "--metrics", "public"),
            Server(registry, tmp_path / "b"),
        ]
        one, other = servers
        found = one.call("retrieve", {"query": "reciprocal rank fusion of ranked lists", "k": 3})
        assert found["hits"][0]["id"].startswith("hybrid-fusion.md#"), found["hits"]
        added = other.call(
            "index/add",
            {"documents": [{"id": "note", "text": "Shards split one collection over databases."}]},
        )
        again = one.call("retrieve", {"query": "split a collection over databases", "k": 1})
        assert again["hits"][0]["id"] == "note#0"
        assert again["indexVersion"] == added["indexVersion"]
        scraped = httpx.get(one.url.removesuffix("/rcp") + "/metrics", timeout=30).text
        for number in range(3):  # every shard, by name
            assert f'rcp_shard_up{{shard="s{number}"}} 1.0' in scraped, scraped
        documents = re.findall(r'rcp_shard_documents\{shard="s\d"\} (\S+)', scraped)
        assert sum(float(n) for n in documents) == samples + 1
    finally:
        for server in servers:
            stop(server.process)
