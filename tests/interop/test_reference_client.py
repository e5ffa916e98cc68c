"""Wire compatibility: the reference SDK (PyPI ``rcp-protocol``) as a test peer."""

from __future__ import annotations

import sys

import pytest

rcp = pytest.importorskip("rcp")


def test_the_reference_client_completes_a_session_against_rcpkit() -> None:
    command = [
        sys.executable,
        "-m",
        "rcpkit",
        "serve",
        "--stdio",
        "--engine",
        "keyword",
        "--sample",
    ]
    client = rcp.connect_stdio(command)
    try:
        assert client.protocol_version == 1
        assert client.server["name"] == "rcpkit-keyword"
        assert client.supports(rcp.Capability.Retrieve)
        assert not client.supports(rcp.Capability.Embed)
        assert client.ping(nonce=5) == {"nonce": 5}
        result = client.search("learned sparse SPLADE", k=2)
        assert result["hits"][0]["id"] == "learned-sparse"
        with pytest.raises(rcp.RcpError):
            client.embed(["gated client-side"])  # unadvertised: refused before any I/O
        with pytest.raises(rcp.RcpError) as caught:
            client.call("embed", {"inputs": ["x"]})  # sent anyway: the server refuses it
        assert "-32003" in str(caught.value)
    finally:
        client.shutdown()
