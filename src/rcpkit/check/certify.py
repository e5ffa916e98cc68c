"""``check(command=…)`` / ``check(url=…)``: certify a server's conformance level (§14.5)."""

from __future__ import annotations

from rcpkit.check.model import Report
from rcpkit.check.peer import Peer
from rcpkit.check.peer_http import HttpPeer
from rcpkit.check.peer_stdio import StdioPeer
from rcpkit.check.runner import run_checks
from rcpkit.client.stdio import StdioEndpoint, child_environment

__all__ = ["check"]


async def check(
    *,
    command: list[str] | None = None,
    url: str | None = None,
    token: str | None = None,
    query: str = "retrieval",
    timeout: float = 10.0,
    cwd: str | None = None,
    pass_env: tuple[str, ...] = (),
) -> Report:
    """Run every check against a stdio command or an HTTP URL."""
    if (command is None) == (url is None):
        raise ValueError("check either a command or an HTTP URL")

    async def open_peer() -> Peer:
        peer: Peer
        if command is not None:
            env = child_environment(StdioEndpoint(command, pass_env=pass_env))
            peer = StdioPeer(command, cwd=cwd, env=env)
        else:
            assert url is not None
            peer = HttpPeer(url, token=token)
        await peer.start()
        return peer

    return await run_checks(open_peer, query=query, timeout=timeout)
