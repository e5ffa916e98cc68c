"""``rcpkit eval DATASET [options] [-- <server command>]``: retrieval quality over the wire."""

from __future__ import annotations

import argparse

from rcpkit.cli.eval_options import add_arguments as add_eval_arguments
from rcpkit.cli.options import add_engine_arguments

__all__ = ["HELP", "add_arguments", "run"]

HELP = "retrieval quality of an RCP server on a BEIR-layout collection or a questions file"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_eval_arguments(parser)
    add_engine_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from rcpkit.cli.eval_run import run as run_eval

    return run_eval(args)
