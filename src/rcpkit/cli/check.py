"""``rcpkit check -- <server command>`` / ``--http URL``: certify a server's level (§14)."""

from __future__ import annotations

import argparse

from rcpkit.check.options import add_arguments

__all__ = ["HELP", "add_arguments", "run"]

HELP = "certify an RCP server's conformance level (§14)"


def run(args: argparse.Namespace) -> int:
    from rcpkit.check.command import run as run_check

    return run_check(args)
