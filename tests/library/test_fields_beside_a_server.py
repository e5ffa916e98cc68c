"""A filter key declared in process while ``rcpkit serve`` runs on the same index."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import rcpkit
from rcpkit.client import SyncClient
from rcpkit.protocol.errors import RCPError

ICE = {"field": "team", "op": "eq", "value": "ice"}


def test_a_key_declared_in_process_stays_filterable_in_a_running_server_s_writes(
    tmp_path: Path,
) -> None:
    where = tmp_path / "index"
    with rcpkit.open(where, create=True, embedder="hashing:64") as index:
        index.add([{"id": "a", "text": "walrus notes"}])
    command = [sys.executable, "-m", "rcpkit", "serve", "--index", str(where)]
    server = SyncClient.connect_stdio(command, pass_env=("PYTHONPATH",))  # this tree's code
    try:
        server.index_add([{"id": "b", "text": "a walrus without a team"}])
        with rcpkit.open(where) as index:  # beside the server: declares `team`
            index.add([{"id": "c", "text": "walrus team", "meta": {"team": "ice"}}])
        server.index_add([{"id": "d", "text": "walrus team too", "meta": {"team": "ice"}}])
        # §13.2: the running server's filter fields are the ones it advertised.
        with pytest.raises(RCPError) as refused:
            server.retrieve("walrus", filter=ICE)
        assert refused.value.code == -32602
    finally:
        server.close()
    # After a restart (here: the next process to open it) both values filter.
    with rcpkit.open(where) as index:
        hits = index.search("walrus", mode="sparse", filter=ICE)
        assert sorted(hit.chunk.doc_id for hit in hits if hit.chunk) == ["c", "d"]
