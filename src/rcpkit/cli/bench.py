"""``rcpkit bench [SUITE]``: run the benchmarks and print one report.

The suites are a distribution of their own, ``rcpkit-bench`` (``bench/`` in the
repository, ``pip install -e ./bench``; ``make`` installs it), which the core
never imports: this module declares their options and imports them to run.
"""

from __future__ import annotations

import argparse
import sys

from rcpkit.cli.bench_options import add_arguments

__all__ = ["HELP", "INSTALL", "add_arguments", "run"]

HELP = "run the benchmarks and print one report (the rcpkit-bench distribution)"
INSTALL = "pip install -e ./bench"


def run(args: argparse.Namespace) -> int:
    try:
        from rcpkit_bench.command import run as run_bench
    except ImportError as error:
        if error.name is None or error.name.split(".")[0] != "rcpkit_bench":
            raise  # a suite's own dependency is missing: that error says which
        print(
            f"rcpkit bench needs the rcpkit-bench distribution: {INSTALL} (from the repository)",
            file=sys.stderr,
        )
        return 2
    return run_bench(args)
