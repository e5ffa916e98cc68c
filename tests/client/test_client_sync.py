"""The blocking facade over the same async client, against a real server."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from client_support import KEYWORD

from rcpkit.client import CapabilityMissing, DeadlineExceeded, SyncClient


def test_the_sync_client_runs_a_session_and_closes_the_server() -> None:
    with SyncClient.connect_stdio([*KEYWORD, "--sample"], connect_timeout=60) as client:
        assert client.server.name == "rcpkit-keyword"
        assert client.supports("retrieve")
        assert client.retrieve("bm25", k=1).hits[0].id == "bm25"
        assert client.ping("x").nonce == "x"
        with pytest.raises(CapabilityMissing):
            client.embed(["x"])


def test_the_sync_client_iterates_a_streaming_call_then_returns_its_result() -> None:
    with SyncClient.connect_stdio([*KEYWORD, "--sample"], connect_timeout=60) as client:
        call = client.stream_retrieve("chunking", k=2)
        stages = [getattr(event, "stage", None) for event in call]
        assert stages == ["recall", "pack"]
        assert call.result().hits[0].id == "chunking"


SILENT_SERVER = """
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message.get("method") == "initialize":
        result = {"protocolVersion": 1, "server": {"name": "silent", "version": "1"},
                  "capabilities": {"retrieve": {}}}
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"""


def test_a_sync_timeout_message_states_the_timeout_that_was_set(tmp_path: Path) -> None:
    script = tmp_path / "silent.py"
    script.write_text(SILENT_SERVER)
    with SyncClient.connect_stdio([sys.executable, str(script)], timeout=0.3) as client:
        with pytest.raises(DeadlineExceeded, match=r"`retrieve` got no answer within 0\.3 s"):
            client.retrieve("anything")
        with pytest.raises(DeadlineExceeded, match=r"within 0\.2 s"):
            client.retrieve("anything", timeout=0.2)
