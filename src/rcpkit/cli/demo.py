"""``rcpkit demo [QUERY]``: index the bundled samples and query them over stdio."""

from __future__ import annotations

import argparse
import asyncio

__all__ = ["HELP", "add_arguments", "run"]

HELP = "index the samples and query them over stdio"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("query", nargs="?", default=None)


def run(args: argparse.Namespace) -> int:
    from rcpkit.demo import DEFAULT_QUERY, run_demo

    return asyncio.run(run_demo(args.query or DEFAULT_QUERY))
