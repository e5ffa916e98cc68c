"""The ``rcpkit`` command line: index, serve, query, demo, bench."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["main"]


def _engine_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--index",
        type=Path,
        default=None,
        help="index folder (default: $RCPKIT_INDEX or ~/.local/share/rcpkit/index)",
    )
    parser.add_argument("--config", type=Path, default=None, help="TOML config file")
    parser.add_argument(
        "--embedder",
        default=None,
        help="'minilm' (default) or a folder with model.onnx + tokenizer.json",
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rcpkit", description="Retrieval Context Protocol toolkit"
    )
    commands = parser.add_subparsers(dest="command", required=True)

    index = commands.add_parser("index", help="index files and folders")
    index.add_argument("paths", nargs="+", type=Path)
    index.add_argument(
        "--no-contextual",
        action="store_true",
        help="do not prepend title and headings to chunks before embedding",
    )
    _engine_options(index)

    serve = commands.add_parser("serve", help="serve an RCP engine over stdio")
    serve.add_argument("--stdio", action="store_true", help="serve on stdin/stdout (default)")
    serve.add_argument(
        "--engine",
        choices=["index", "keyword"],
        default="index",
        help="'index': the persistent engine; 'keyword': in-memory BM25",
    )
    serve.add_argument(
        "--sample", action="store_true", help="keyword engine only: load the bundled sample corpus"
    )
    serve.add_argument("--sparse", default=None, help="learned-sparse model, e.g. splade-tiny")
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
    _engine_options(serve)

    query = commands.add_parser("query", help="retrieve from an index and print the hits")
    query.add_argument("text")
    query.add_argument("-k", type=int, default=5)
    query.add_argument("--mode", choices=["dense", "sparse", "hybrid"], default=None)
    query.add_argument("--fusion", choices=["rrf", "weighted", "convex"], default=None)
    query.add_argument("--filter", default=None, help="a §8 filter as JSON")
    query.add_argument("--json", action="store_true", help="print the raw RCP result")
    _engine_options(query)

    evaluate = commands.add_parser("eval", help="nDCG/Recall/MRR on a BEIR-layout collection")
    evaluate.add_argument(
        "dataset", type=Path, help="folder with corpus.jsonl, queries.jsonl, qrels/"
    )
    _engine_options(evaluate)

    demo = commands.add_parser("demo", help="index the samples and query them over stdio")
    demo.add_argument("query", nargs="?", default=None)

    bench = commands.add_parser("bench", help="run a benchmark")
    bench.add_argument("suite", choices=["protocol", "engine"])
    bench.add_argument("--quick", action="store_true", help="fewer iterations")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "serve":
            return _serve(args)
        if args.command == "index":
            from rcpkit.engine.commands import index_command

            return index_command(args)
        if args.command == "query":
            from rcpkit.engine.commands import query_command

            return query_command(args)
        if args.command == "eval":
            from rcpkit.engine.commands import eval_command

            return eval_command(args)
        if args.command == "demo":
            from rcpkit.demo import DEFAULT_QUERY, run_demo

            return asyncio.run(run_demo(args.query or DEFAULT_QUERY))
    except (ValueError, OSError) as error:
        print(f"rcpkit: {error}", file=sys.stderr)
        return 2
    if args.suite == "engine":
        from rcpkit.bench.engine import run as run_engine_bench

        return run_engine_bench(quick=args.quick)
    from rcpkit.bench.protocol import run as run_protocol_bench

    return run_protocol_bench(quick=args.quick)


def _serve(args: argparse.Namespace) -> int:
    # §5.1: stdout carries protocol frames only; every diagnostic goes to stderr.
    logging.basicConfig(
        stream=sys.stderr,
        level=args.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    from rcpkit.server.runner import run_async

    if args.engine == "keyword":
        from rcpkit.engine.keyword import KeywordIndex
        from rcpkit.engine.keyword_server import build_keyword_app, load_samples

        index = KeywordIndex()
        if args.sample:
            index.upsert(load_samples())
        app = build_keyword_app(index, writable=not args.read_only)
    else:
        from rcpkit.engine.commands import open_from_args
        from rcpkit.engine.service import build_engine_app

        app = build_engine_app(
            open_from_args(args, writable=not args.read_only, sparse=args.sparse)
        )
    run_async(
        app.serve_stdio(
            deadline=args.deadline, max_batch=args.max_batch, max_line_bytes=args.max_line_bytes
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
