"""``rcpkit gateway rcp.json``: federate the engines of a registry as one RCP server."""

from __future__ import annotations

import argparse

from rcpkit.gateway.options import add_arguments

__all__ = ["HELP", "add_arguments", "run"]

HELP = "federate the engines of an rcp.json registry"


def run(args: argparse.Namespace) -> int:
    from rcpkit.gateway.command import run as run_gateway

    return run_gateway(args)
