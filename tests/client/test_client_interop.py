"""Wire compatibility: the rcpkit client against a server built from the reference SDK."""

from __future__ import annotations

from pathlib import Path

import pytest
from client_support import PYTHON

from rcpkit.client import CapabilityMissing, Client, OptionUnsupported

pytest.importorskip("rcp")

REFERENCE_SERVER = [PYTHON, str(Path(__file__).with_name("reference_server_support.py"))]


async def test_the_rcpkit_client_completes_a_session_with_a_reference_sdk_server() -> None:
    async with await Client.connect_stdio(REFERENCE_SERVER, connect_timeout=60) as client:
        assert client.server.name == "reference-peer"
        assert client.protocol_version == 1
        assert client.conformance == "L0"
        assert (await client.ping("n")).nonce == "n"
        result = await client.retrieve("rank fusion", k=2)
        assert [hit.id for hit in result.hits] == ["r1"]
        assert result.hits[0].citation is not None
        with pytest.raises(CapabilityMissing):
            await client.embed(["x"])
        with pytest.raises(OptionUnsupported):
            await client.retrieve("x", mode="dense")
