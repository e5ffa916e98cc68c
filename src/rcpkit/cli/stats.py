"""``rcpkit stats``: what an index holds, without loading any model or writing anything."""

from __future__ import annotations

import argparse
import json
from typing import Any

from rcpkit.cli.options import add_engine_arguments

__all__ = ["HELP", "add_arguments", "run"]

HELP = "documents, chunks, versions, tenants, size and model of an index"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    add_engine_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from rcpkit.cli.engine import open_store_from_args

    config, store = open_store_from_args(args)
    try:
        figures = describe(store)
    finally:
        store.close()
    figures["index"] = str(config.store or config.index)
    if args.json:
        print(json.dumps(figures, sort_keys=True))
        return 0
    print(f"index {figures['index']}")
    for label, value in _lines(figures):
        print(f"  {label:<12} {value}")
    return 0


def describe(store: Any) -> dict[str, Any]:
    """The figures ``rcpkit stats`` prints, from the store alone (also ``x-rcpkit/stats``)."""
    from rcpkit.handlers.inspect import index_figures

    return index_figures(store)


def _lines(figures: dict[str, Any]) -> list[tuple[str, str]]:
    size = figures.get("size_bytes")
    return [
        ("documents", f"{figures['documents']} ({figures['ingested']} from `rcpkit index`)"),
        ("chunks", str(figures["chunks"])),
        ("version", f"{figures['version']} (servable from {figures['floor']})"),
        ("tenants", str(figures["tenants"])),
        ("size", f"{size / 1e6:.1f} MB on disk" if size is not None else "unknown"),
        ("embedder", f"{figures['embedder']} ({figures['dimension']} dimensions)"),
        ("source root", str(figures["root"] or "none recorded")),
        ("last write", str(figures.get("last_write") or "unknown")),
    ]
