"""``rcpkit query TEXT``: retrieve from an index and print the hits (or the raw result)."""

from __future__ import annotations

import argparse
import asyncio
import json
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
    parser.add_argument("--json", action="store_true", help="print the raw RCP result")
    add_engine_arguments(parser)


def run(args: argparse.Namespace) -> int:
    """Retrieve through the same validation and gating as the server, print a table."""
    params: dict[str, Any] = {"query": args.text, "k": args.k}
    if args.mode:
        params["mode"] = args.mode
    if args.fusion:
        params["fusion"] = {"method": args.fusion}
    if args.filter:
        params["filter"] = parse_filter_option(args.filter)
    return asyncio.run(_query(args, params))


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
    import msgspec

    from rcpkit.cli.engine import open_from_args
    from rcpkit.client import connect_in_memory
    from rcpkit.handlers.engine import build_engine_app
    from rcpkit.protocol import messages as m
    from rcpkit.protocol.errors import RCPError

    engine = open_from_args(args, create=False)
    try:
        # The real server over memory: the handshake, gating and params typing it runs.
        server = build_engine_app(engine).server
        async with await connect_in_memory(server, timeout=None) as client:
            raw = await client.call("retrieve", params, gate=False)
    except RCPError as error:
        print(
            f"rcpkit: {error}" + (f" (field {error.field})" if error.field else ""), file=sys.stderr
        )
        return 1
    finally:
        engine.close()
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
