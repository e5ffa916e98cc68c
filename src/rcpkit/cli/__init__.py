"""The ``rcpkit`` command line: one module per subcommand, looked up in a registry.

Each ``rcpkit/cli/<subcommand>.py`` offers ``HELP``, ``add_arguments(parser)``
and ``run(args) -> exit status``. Every start-up declares every subcommand's
options, so those modules import argparse and option declarations only; what a
subcommand runs is imported when it runs. Every option and command lives here
(``<topic>_options.py`` declares, ``<topic>_run.py`` runs): the library packages
take typed config (``HttpConfig``, ``ObserveConfig``, …), never an argparse
namespace.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from collections.abc import Sequence
from typing import Protocol

from rcpkit import __version__
from rcpkit.cli import (
    backup,
    bench,
    check,
    collections,
    console,
    db,
    delete,
    demo,
    export,
    gateway,
    index,
    mcp,
    query,
    serve,
    show,
    solr,
    stats,
    tenants,
)
from rcpkit.cli import eval as evaluate

__all__ = ["COMMANDS", "Subcommand", "main"]


class Subcommand(Protocol):
    """What a ``rcpkit/cli/<subcommand>.py`` module offers."""

    HELP: str

    def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, args: argparse.Namespace) -> int: ...


# In `rcpkit --help` order.
COMMANDS: dict[str, Subcommand] = {
    "index": index,
    "serve": serve,
    "query": query,
    "stats": stats,
    "show": show,
    "delete": delete,
    "tenants": tenants,
    "export": export,
    "backup": backup,
    "eval": evaluate,
    "collections": collections,
    "db": db,
    "solr": solr,
    "demo": demo,
    "gateway": gateway,
    "check": check,
    "mcp": mcp,
    "console": console,
    "bench": bench,
}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rcpkit", description="Retrieval Context Protocol toolkit"
    )
    parser.add_argument("--version", action="version", version=f"rcpkit {__version__}")
    commands = parser.add_subparsers(dest="subcommand", required=True)
    for name, command in COMMANDS.items():
        command.add_arguments(commands.add_parser(name, help=command.HELP))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    server: list[str] = []
    # `rcpkit eval DATASET [options] -- <command>`, `rcpkit mcp [options] -- <command>`
    if words[:1] in (["eval"], ["mcp"]) and "--" in words:
        cut = words.index("--")
        words, server = words[:cut], words[cut + 1 :]
    args = _parser().parse_args(words)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # to start copies (serve --workers)
    if args.subcommand in ("eval", "mcp"):
        args.command = server
    try:
        return COMMANDS[args.subcommand].run(args)
    except (ValueError, OSError) as error:
        return _refused(str(error))
    except sqlite3.DatabaseError as error:
        # Issue 52: a page damaged past the checks on open surfaces on its first read.
        where = getattr(args, "index", None) or "the index"
        return _refused(f"a database of {where} is damaged ({error})")
    except Exception as error:
        from rcpkit.protocol.errors import RCPError  # on failure only: startup stays cheap

        if not isinstance(error, RCPError):
            raise
        # Issue 52: what the opened engine refuses is a line, as the server would
        # answer it, not a traceback.
        return _refused(error.message)


def _refused(message: str) -> int:
    """One line on stderr and exit 2 (a driver's message may span lines: psycopg's)."""
    line = " ".join(part.strip() for part in message.splitlines() if part.strip())
    print(f"rcpkit: {line}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
