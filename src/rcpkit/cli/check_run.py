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

from rcpkit.check.certify import check
from rcpkit.check.report import render_json, render_text
from rcpkit.cli.check_options import add_arguments

__all__ = ["add_arguments", "run"]


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
