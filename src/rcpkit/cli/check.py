"""``rcpkit check -- <server command>`` / ``--http URL``: certify a server's level (§14)."""

from __future__ import annotations

import argparse

from rcpkit.cli.check_options import add_arguments

__all__ = ["HELP", "add_arguments", "run"]

HELP = "certify an RCP server's conformance level (§14)"


def run(args: argparse.Namespace) -> int:
    from rcpkit.cli.check_run import run as run_check

    return run_check(args)
