"""Issue 35 item 6: a server's "line too large" error has no id (it could not read one),
yet it answers the one call whose line was that size: the waiting call gets -32013 at
once instead of waiting out its deadline."""

from __future__ import annotations

import asyncio
import sys

import pytest

from rcpkit.client import CallOptions, Client
from rcpkit.protocol import RCPError

GATEWAY_REGISTRY = '{"engines": []}'


async def test_an_oversized_line_is_refused_to_the_call_that_sent_it(tmp_path: object) -> None:
    from pathlib import Path

    registry = Path(str(tmp_path)) / "rcp.json"
    registry.write_text(GATEWAY_REGISTRY)
    command = [sys.executable, "-m", "rcpkit", "gateway", str(registry),
               "--max-line-bytes", "100000"]  # fmt: skip
    async with await Client.connect_stdio(
        command, pass_env=("PYTHONPATH",), connect_timeout=60
    ) as client:
        with pytest.raises(RCPError) as refused:
            await client.call("ping", {"nonce": "x" * 200_000}, CallOptions(timeout=30))
        small, big = await asyncio.gather(
            client.call("ping", {"nonce": 1}, CallOptions(timeout=30)),
            client.call("ping", {"nonce": "y" * 150_000}, CallOptions(timeout=30)),
            return_exceptions=True,
        )
    # At once, not at the 30 s timeout: that would be -32014 (the client's deadline),
    # so the code says it without reading a clock a loaded machine can push (issue 52).
    assert refused.value.code == -32013
    assert small == {"nonce": 1}
    assert isinstance(big, RCPError) and big.code == -32013
