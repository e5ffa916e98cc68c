"""`rcpkit db shards rebalance` with a shard down, through the real CLI (issue 52, item 8):
one line naming what failed, not a traceback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from cli_support import HASHING, rcpkit
from pg_support import own_server

from rcpkit.engine.store.postgres.pgserver import PostgresServer


@pytest.fixture
def shards() -> Iterator[list[PostgresServer]]:
    servers: list[PostgresServer] = []
    try:
        for _ in range(2):
            servers.append(own_server())
            with psycopg.connect(servers[-1].url(), autocommit=True) as connection:
                connection.execute("CREATE DATABASE rcpkit")
        yield servers
    finally:
        for server in servers:
            server.stop()


@pytest.mark.timeout(300)
def test_rebalance_with_a_shard_down_is_a_one_line_error(
    shards: list[PostgresServer], tmp_path: Path
) -> None:
    registry = tmp_path / "shards.toml"
    registry.write_text(
        "".join(
            f'[[shard]]\nname = "s{n}"\nurl = "{server.url("rcpkit")}"\n'
            for n, server in enumerate(shards)
        )
    )
    done = rcpkit("db", "shards", "init", "--store", str(registry))
    assert done.returncode == 0, done.stderr
    docs = tmp_path / "docs"
    docs.mkdir()
    for n in range(6):
        (docs / f"note{n}.md").write_text(f"# Note {n}\n\nHerons and otters, note {n}.\n")
    store = ("--store", str(registry), "--index", str(tmp_path / "i"))
    done = rcpkit("index", str(docs), *store, *HASHING)
    assert done.returncode == 0, done.stderr

    shards.pop().stop()  # s1 is down (and out of the fixture's hands)
    done = rcpkit("db", "shards", "rebalance", "--store", str(registry))
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    errors = done.stderr.strip().splitlines()
    assert len(errors) == 1 and errors[0].startswith("rcpkit: "), done.stderr
    assert "s1" in errors[0], errors
