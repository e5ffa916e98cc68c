"""``rcpkit bench [SUITE]``: run the benchmarks and print one report."""

from __future__ import annotations

import argparse

from rcpkit.bench.options import add_arguments

__all__ = ["HELP", "add_arguments", "run"]

HELP = "run the benchmarks and print one report"


def run(args: argparse.Namespace) -> int:
    from rcpkit.bench.command import run as run_bench

    return run_bench(args)
