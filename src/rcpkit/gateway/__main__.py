"""``python -m rcpkit.gateway rcp.json [--http …]`` (the same as ``rcpkit gateway``)."""

import argparse

from rcpkit.gateway.command import add_arguments, run

parser = argparse.ArgumentParser(
    prog="rcpkit gateway", description="serve the engines of an rcp.json registry as one (§16)"
)
add_arguments(parser)
raise SystemExit(run(parser.parse_args()))
