"""``rcpkit mcp``: serve an RCP engine to MCP hosts (the ``mcp`` extra).

``--print-config`` prints the common host shape (Claude Desktop, Cursor, VS Code
and others read it): ``{"mcpServers": {name: {"command", "args", "env"}}}`` for
stdio, ``{"url": ...}`` for Streamable HTTP.

Declaring these options imports nothing of the MCP SDK; ``run`` does.

    rcpkit mcp --index DIR            # spawn `rcpkit serve --read-only --index DIR`
    rcpkit mcp --index DIR --writes   # ... offering index_add/index_delete (creates DIR)
    rcpkit mcp -- CMD ARGS...         # any RCP server command
    rcpkit mcp --url http://host/rcp  # an RCP server over HTTP
    rcpkit mcp --registry rcp.json    # every engine of a registry (federated)
    rcpkit mcp ... --http 8000        # MCP Streamable HTTP instead of stdio
    rcpkit mcp ... --print-config     # the host config snippet, then exit

Read-only unless ``--writes``: an agent gets tools that change the index only
when the user asked for them (``--read-only`` is accepted and is the default).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["HELP", "add_arguments", "host_config", "run"]

HELP = "serve an RCP engine to MCP hosts (the `mcp` extra)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    source = parser.add_argument_group("the RCP engine (one of; default: the --index engine)")
    source.add_argument(
        "--index", type=Path, default=None, help="an rcpkit index folder (spawns `rcpkit serve`)"
    )
    source.add_argument("--embedder", default=None, help="passed to `rcpkit serve`")
    source.add_argument("--config", type=Path, default=None, help="passed to `rcpkit serve`")
    source.add_argument(
        "--read-only",
        action="store_true",
        help="offer no write tools and pass --read-only to `rcpkit serve` (the default)",
    )
    source.add_argument("--url", default=None, help="an RCP server over HTTP (its base URL)")
    source.add_argument(
        "--token", default=os.environ.get("RCPKIT_TOKEN"), help="bearer token for --url"
    )
    source.add_argument("--registry", type=Path, default=None, help="an rcp.json registry")
    parser.add_argument(
        "--http",
        default=None,
        metavar="[HOST:]PORT",
        help="serve MCP over Streamable HTTP (default: stdio); HOST defaults to 127.0.0.1",
    )
    parser.add_argument("--path", default="/mcp", help="the Streamable HTTP endpoint path")
    parser.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="per tool call; sent to the engine as _meta.deadlineMs (§13.1)",
    )
    parser.add_argument(
        "--print-config",
        action="store_true",
        help="print the mcpServers entry an MCP host needs, then exit",
    )
    parser.add_argument("--name", default="rcpkit", help="the server name in --print-config")
    parser.add_argument(
        "--writes",
        action="store_true",
        help="give the agent index_add/index_delete (and let `rcpkit serve` create "
        "the --index folder); without it the bridge is read-only",
    )


def run(args: argparse.Namespace) -> int:
    command: list[str] = list(getattr(args, "command", []) or [])
    chosen = [bool(command), args.url is not None, args.registry is not None]
    if sum(chosen) > 1:
        print("rcpkit mcp: give one of -- CMD, --url, --registry", file=sys.stderr)
        return 2
    if args.writes and args.read_only:
        print("rcpkit mcp: give one of --writes, --read-only", file=sys.stderr)
        return 2
    if args.print_config:
        return _print_config(args, command)
    try:
        import mcp  # noqa: F401  (the SDK: named before anything is spawned)
    except ImportError:
        print("rcpkit mcp: needs the MCP SDK: pip install 'rcpkit[mcp]'", file=sys.stderr)
        return 2
    from rcpkit.mcp_bridge.backends import Source

    if args.url is not None:
        source = Source(url=args.url, token=args.token)
    elif args.registry is not None:
        source = Source(registry=str(args.registry))
    else:
        source = Source(command=tuple(command or _serve_command(args)))
    return _serve(args, source)


def _serve(args: argparse.Namespace, source: Any) -> int:
    from rcpkit.mcp_bridge.serve import serve_http, serve_stdio
    from rcpkit.protocol.errors import RCPError
    from rcpkit.server.runner import run_async

    try:
        writes = args.writes  # an agent gets write tools only when the user asked
        if args.http is None:
            run_async(serve_stdio(source, timeout=args.timeout, writes=writes))
        else:
            from rcpkit.transport.http.config import parse_bind

            host, port = parse_bind(args.http)
            served = serve_http(
                source, host=host, port=port, path=args.path, timeout=args.timeout, writes=writes
            )
            run_async(served)
    except RCPError as error:
        print(f"rcpkit mcp: {source.describe()}: {error.message}", file=sys.stderr, flush=True)
        return 1
    return 0


def _serve_command(args: argparse.Namespace) -> list[str]:
    command = [sys.executable, "-m", "rcpkit", "serve", "--stdio"]
    if args.index is not None:
        command += ["--index", str(args.index.expanduser().resolve())]
    if args.embedder is not None:
        command += ["--embedder", args.embedder]
    if args.config is not None:
        command += ["--config", str(args.config.expanduser().resolve())]
    if not args.writes:
        command.append("--read-only")
    elif args.index is not None:
        # The bridge offers index_add: a host's first session may start the index.
        command.append("--create")
    return command


def _print_config(args: argparse.Namespace, command: list[str]) -> int:
    if args.http is not None:
        from rcpkit.transport.http.config import parse_bind

        host, port = parse_bind(args.http)
        snippet = host_config([], name=args.name, url=f"http://{host}:{port}{args.path}")
    else:
        snippet = host_config(_bridge_args(args, command), name=args.name)
        if args.url is not None and args.token:
            # Never print the secret itself: the host's config names where it goes.
            entry = snippet["mcpServers"][args.name]
            entry.setdefault("env", {})["RCPKIT_TOKEN"] = "<the RCP server's bearer token>"
    print(json.dumps(snippet, indent=2))
    return 0


def _bridge_args(args: argparse.Namespace, command: list[str]) -> list[str]:
    """The same bridge, spelled with absolute paths (hosts start it from anywhere)."""
    words: list[str] = []
    if args.url is not None:
        words += ["--url", args.url]
    elif args.registry is not None:
        words += ["--registry", str(args.registry.expanduser().resolve())]
    elif not command:
        if args.index is not None:
            words += ["--index", str(args.index.expanduser().resolve())]
        if args.embedder is not None:
            words += ["--embedder", args.embedder]
        if args.config is not None:
            words += ["--config", str(args.config.expanduser().resolve())]
    # Spelled out either way, so the snippet means the same to an older rcpkit whose
    # bridge offered writes by default.
    words.append("--writes" if args.writes else "--read-only")
    if args.timeout != 60.0:
        words += ["--timeout", f"{args.timeout:g}"]
    if command:
        words += ["--", *command]
    return words


def host_config(
    bridge_args: Sequence[str], *, name: str = "rcpkit", url: str | None = None
) -> dict[str, Any]:
    """The ``mcpServers`` entry that starts ``rcpkit mcp <bridge_args>`` (or points at ``url``)."""
    if url is not None:
        return {"mcpServers": {name: {"type": "http", "url": url}}}
    executable = shutil.which("rcpkit")
    if executable is not None:
        command, args = executable, ["mcp", *bridge_args]
    else:
        command, args = sys.executable, ["-m", "rcpkit", "mcp", *bridge_args]
    entry: dict[str, Any] = {"command": command, "args": args}
    env = {key: os.environ[key] for key in _CARRIED if key in os.environ}
    if env:
        entry["env"] = env
    return {"mcpServers": {name: entry}}


# Hosts start servers with a bare environment: carry what finds the index and code.
_CARRIED = ("RCPKIT_INDEX", "RCPKIT_EMBEDDER", "RCPKIT_CONFIG", "PYTHONPATH", "VIRTUAL_ENV")
