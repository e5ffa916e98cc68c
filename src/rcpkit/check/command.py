"""``rcpkit check -- <server command>`` / ``rcpkit check --http URL``: certify a server (§14.5).

For the CLI: ``add_arguments(parser)`` declares the options, ``run(args)``
returns the exit status: 0 when every applicable MUST passed and the
declared ``_meta.conformance`` is not above the certified level, 1 when a
MUST failed or the server overclaims, 2 for a usage error.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

from rcpkit.check.model import Report
from rcpkit.check.options import add_arguments
from rcpkit.check.peer import Peer
from rcpkit.check.peer_http import HttpPeer
from rcpkit.check.peer_stdio import StdioPeer
from rcpkit.check.report import render_json, render_text
from rcpkit.check.runner import run_checks
from rcpkit.client.stdio import StdioEndpoint, child_environment

__all__ = ["add_arguments", "check", "run"]


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


def run(args: argparse.Namespace) -> int:
    command = list(args.command or [])
    if command and command[0] == "--":
        command = command[1:]
    if bool(command) == bool(args.http):
        print("rcpkit check: give either -- <server command> or --http URL", file=sys.stderr)
        return 2
    token = os.environ.get(args.token_env) if args.token_env else None
    try:
        report = asyncio.run(
            check(
                command=command or None,
                url=args.http,
                token=token,
                query=args.query,
                timeout=args.timeout,
                cwd=args.cwd,
                pass_env=tuple(args.pass_env),
            )
        )
    except Exception as error:
        print(f"rcpkit check: {error}", file=sys.stderr)
        return 2
    print(render_json(report) if args.json else render_text(report))
    return 0 if report.passed else 1
