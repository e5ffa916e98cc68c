"""The blocking facade over the same async client, against a real server."""

from __future__ import annotations

import pytest
from client_support import KEYWORD

from rcpkit.client import CapabilityMissing, SyncClient


def test_the_sync_client_runs_a_session_and_closes_the_server() -> None:
    with SyncClient.connect_stdio([*KEYWORD, "--sample"]) as client:
        assert client.server.name == "rcpkit-keyword"
        assert client.supports("retrieve")
        assert client.retrieve("bm25", k=1).hits[0].id == "bm25"
        assert client.ping("x").nonce == "x"
        with pytest.raises(CapabilityMissing):
            client.embed(["x"])


def test_the_sync_client_iterates_a_streaming_call_then_returns_its_result() -> None:
    with SyncClient.connect_stdio([*KEYWORD, "--sample"]) as client:
        call = client.stream_retrieve("chunking", k=2)
        stages = [getattr(event, "stage", None) for event in call]
        assert stages == ["recall", "pack"]
        assert call.result().hits[0].id == "chunking"
