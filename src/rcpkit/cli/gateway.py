"""``rcpkit gateway rcp.json``: federate the engines of a registry as one RCP server."""

from __future__ import annotations

import argparse

from rcpkit.cli.gateway_options import add_arguments

__all__ = ["HELP", "add_arguments", "run"]

HELP = "federate the engines of an rcp.json registry"


def run(args: argparse.Namespace) -> int:
    from rcpkit.cli.gateway_run import run as run_gateway

    return run_gateway(args)
