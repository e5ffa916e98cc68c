"""``rcpkit query TEXT``: retrieve from an index and print the hits (or the raw result).

The index is opened in-process by default; ``--url`` sends the same
``retrieve`` to a running RCP HTTP server instead (§5.2), and prints the same.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import textwrap
from typing import Any

from rcpkit.cli.options import add_engine_arguments

__all__ = ["HELP", "add_arguments", "run"]

HELP = "retrieve from an index and print the hits"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("text")
    parser.add_argument("-k", type=int, default=5, help="how many hits to return (default 5)")
    parser.add_argument("--mode", choices=["dense", "sparse", "hybrid"], default=None)
    parser.add_argument("--fusion", choices=["rrf", "weighted", "convex"], default=None)
    parser.add_argument(
        "--filter",
        default=None,
        help=(
            "a §8 filter as JSON, e.g. "
            '\'{"field":"folders","op":"contains","value":"docs"}\', '
            "or the shorthand FIELD=VALUE (`contains` for list fields, else `eq`)"
        ),
    )
    parser.add_argument(
        "--token-budget",
        type=_positive,
        default=None,
        metavar="TOKENS",
        help="retrieve.tokenBudget (§7.7.2): hits packed to fit this many tokens",
    )
    parser.add_argument("--json", action="store_true", help="print the raw RCP result")
    remote = parser.add_argument_group("a running server instead of the index (§5.2)")
    remote.add_argument(
        "--url",
        "--server",
        dest="url",
        default=None,
        metavar="URL",
        help="an RCP HTTP server's base URL, e.g. http://127.0.0.1:8080/rcp",
    )
    remote.add_argument(
        "--token",
        default=None,
        help=f"bearer token for --url (default: ${_TOKEN_ENV}; the environment keeps it "
        "out of the process list)",
    )
    remote.add_argument(
        "--timeout", type=float, default=60.0, metavar="SECONDS", help="for --url (default 60)"
    )
    add_engine_arguments(parser)


_TOKEN_ENV = "RCPKIT_TOKEN"  # as for `rcpkit mcp --url`
# The engine options shape the in-process engine; with --url nothing reads them.
_ENGINE_OPTIONS = ("index", "config", "store", "graph", "sparse", "embedder")


def run(args: argparse.Namespace) -> int:
    """Retrieve through the same validation and gating as the server, print a table."""
    params: dict[str, Any] = {"query": args.text, "k": args.k}
    if args.mode:
        params["mode"] = args.mode
    if args.fusion:
        params["fusion"] = {"method": args.fusion}
    if args.filter:
        params["filter"] = parse_filter_option(args.filter)
    if args.token_budget is not None:
        params["tokenBudget"] = args.token_budget
    if args.url is None:
        return asyncio.run(_query(args, params))
    ignored = [f"--{name}" for name in _ENGINE_OPTIONS if getattr(args, name, None) is not None]
    if ignored:
        raise ValueError(
            f"{', '.join(ignored)}: for the in-process engine, which --url does not open"
        )
    return asyncio.run(_query_server(args, params))


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"takes a positive integer, not {text!r}")
    return value


_LIST_FIELDS = frozenset({"folders", "tag"})  # list-valued: the shorthand means `contains`


def parse_filter_option(text: str) -> Any:
    """``--filter``: §8 JSON, or ``FIELD=VALUE`` (``contains`` on list fields, else ``eq``)."""
    stripped = text.strip()
    if stripped.startswith(("{", "[")):
        try:
            return json.loads(stripped)
        except json.JSONDecodeError as error:
            reason = f"--filter is not valid JSON ({error.msg})"
            raise ValueError(f"{reason}; {_FILTER_SYNTAX}") from None
    field, equals, value = stripped.partition("=")
    if not equals or not field.strip():
        raise ValueError(f"--filter {text!r} is neither JSON nor FIELD=VALUE; {_FILTER_SYNTAX}")
    field = field.strip()
    op = "contains" if field in _LIST_FIELDS else "eq"
    return {"field": field, "op": op, "value": value.strip()}


_FILTER_SYNTAX = (
    "write FIELD=VALUE (e.g. folders=docs) or §8 JSON "
    '(e.g. \'{"field":"folders","op":"contains","value":"docs"}\')'
)


async def _query(args: argparse.Namespace, params: dict[str, Any]) -> int:
    # Imported here, not above: declaring the options must stay cheap (numpy, models).
    from rcpkit.cli.engine import open_from_args
    from rcpkit.client import connect_in_memory
    from rcpkit.handlers.engine import build_engine_app
    from rcpkit.protocol.errors import RCPError

    engine = open_from_args(args, create=False)
    try:
        # The real server over memory: the handshake, gating and params typing it runs.
        server = build_engine_app(engine).server
        async with await connect_in_memory(server, timeout=None) as client:
            raw = await client.call("retrieve", params, gate=False)
    except RCPError as error:
        _print_error(error)
        return 1
    finally:
        engine.close()
    return _print_result(args, raw)


async def _query_server(args: argparse.Namespace, params: dict[str, Any]) -> int:
    """The same ``retrieve`` over HTTP; the server validates and gates it, as in-process."""
    from rcpkit.client import Client, TransportClosed
    from rcpkit.protocol.errors import ErrorCode, RCPError

    token = args.token if args.token is not None else os.environ.get(_TOKEN_ENV) or None
    try:
        # The handshake gets --timeout too: a server loading its model stack on a loaded
        # machine took 10-11 s to answer initialize (issue 51), and a fixed 10 s gave up.
        client = await Client.connect_http(
            args.url, token=token, timeout=args.timeout, connect_timeout=args.timeout
        )
    except (TransportClosed, RCPError) as error:
        # No HTTP status: the exchange never happened (refused, no such host, timed out).
        answered = bool((error.extra or {}).get("httpStatus"))
        unreachable = isinstance(error, TransportClosed) or (
            error.code == ErrorCode.BACKEND_UNAVAILABLE and not answered
        )
        if unreachable:  # one line, not a traceback: the usual cause is a wrong URL or port
            print(f"rcpkit query: cannot reach {args.url}: {error.message}", file=sys.stderr)
        else:
            _print_error(error)
        return 1
    try:
        raw = await client.call("retrieve", params, gate=False)
    except RCPError as error:
        _print_error(error)
        return 1
    finally:
        await client.close()
    return _print_result(args, raw)


def _print_error(error: Any) -> None:
    field = f" (field {error.field})" if error.field else ""
    print(f"rcpkit: {error}{field}", file=sys.stderr)


def _print_result(args: argparse.Namespace, raw: Any) -> int:
    import msgspec

    from rcpkit.protocol import messages as m

    if args.json:
        print(msgspec.json.encode(raw).decode())
        return 0
    _print_table(msgspec.convert(raw, m.RetrieveResult, strict=False))
    return 0


def _print_table(result: Any) -> None:
    hits = result.hits
    print(
        f"{len(hits)} hits (index version {result.index_version}, "
        f"{result.usage.latency_ms if result.usage else '?'} ms)"
    )
    # What the engine says of the ranking (no chunk holds the query's words, the terms
    # feedback added, a cut query): scores alone do not show it.
    for note in (result.usage.notes if result.usage else None) or []:
        print(f"note: {note}")
    for rank, hit in enumerate(hits, 1):
        citation = hit.citation
        where = f"{citation.source}"
        if citation.page:
            where += f" p.{citation.page}"
        where += f" [{citation.start}:{citation.end}]"
        print(f"{rank:>2}. {hit.score:8.4f}  {hit.id}")
        print(f"    {citation.title or ''} — {where}")
        body = " ".join((hit.text or "").split())
        print(textwrap.indent(textwrap.shorten(body, 220), "    "))
