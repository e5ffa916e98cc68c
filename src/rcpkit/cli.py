"""The ``rcpkit`` command line: serve, demo, bench."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from collections.abc import Sequence

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rcpkit", description="Retrieval Context Protocol toolkit"
    )
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser("serve", help="serve an RCP engine (stdio by default)")
    serve.add_argument("--stdio", action="store_true", help="serve on stdin/stdout (default)")
    serve.add_argument("--sample", action="store_true", help="load the bundled sample corpus")
    serve.add_argument("--read-only", action="store_true", help="refuse index writes")
    serve.add_argument(
        "--deadline",
        type=float,
        default=None,
        metavar="SECONDS",
        help="default per-request deadline (§13.1)",
    )
    serve.add_argument("--max-batch", type=int, default=1024, help="largest JSON-RPC batch")
    serve.add_argument(
        "--max-line-bytes", type=int, default=16 * 1024 * 1024, help="largest stdio message"
    )
    serve.add_argument(
        "--log-level",
        default=os.environ.get("RCPKIT_LOG_LEVEL", "WARNING"),
        help="stderr log level",
    )

    demo = commands.add_parser("demo", help="run a stdio session against `rcpkit serve`")
    demo.add_argument("query", nargs="?", default=None)

    bench = commands.add_parser("bench", help="run a benchmark")
    bench.add_argument("suite", choices=["protocol"])
    bench.add_argument("--quick", action="store_true", help="fewer iterations")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "serve":
        return _serve(args)
    if args.command == "demo":
        from rcpkit.demo import DEFAULT_QUERY, run_demo

        return asyncio.run(run_demo(args.query or DEFAULT_QUERY))
    from rcpkit.bench.protocol import run as run_protocol_bench

    return run_protocol_bench(quick=args.quick)


def _serve(args: argparse.Namespace) -> int:
    # §5.1: stdout carries protocol frames only; every diagnostic goes to stderr.
    logging.basicConfig(
        stream=sys.stderr,
        level=args.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    from rcpkit.engine.keyword import KeywordIndex
    from rcpkit.engine.keyword_server import build_keyword_app, load_samples
    from rcpkit.server.runner import run_async

    index = KeywordIndex()
    if args.sample:
        index.upsert(load_samples())
    app = build_keyword_app(index, writable=not args.read_only)
    run_async(
        app.serve_stdio(
            deadline=args.deadline, max_batch=args.max_batch, max_line_bytes=args.max_line_bytes
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
