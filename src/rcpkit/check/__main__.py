"""``python -m rcpkit.check -- <server command>`` (the same as ``rcpkit check``)."""

import argparse

from rcpkit.check.command import add_arguments, run

parser = argparse.ArgumentParser(
    prog="rcpkit check", description="certify an RCP server's conformance level (§14.5)"
)
add_arguments(parser)
raise SystemExit(run(parser.parse_args()))
