"""``rcpkit serve``: an RCP engine over stdio (default) or HTTP."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable
from typing import Any

from rcpkit.cli.http_options import add_http_arguments
from rcpkit.cli.observe_options import add_observe_arguments
from rcpkit.cli.options import add_engine_arguments

__all__ = ["HELP", "TENANT_AWARE_ENGINES", "add_arguments", "run"]

HELP = "serve an RCP engine over stdio or HTTP"

# Engines whose handlers honour ctx.tenant (the persistent engine keeps documents,
# ids, cursors, sessions and memories per tenant). Tenant-scoped tokens are refused
# for any other engine, so that a scoped caller can never see another tenant's data.
TENANT_AWARE_ENGINES: frozenset[str] = frozenset({"index"})


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--stdio", action="store_true", help="serve on stdin/stdout (default)")
    parser.add_argument(
        "--engine",
        choices=["index", "keyword"],
        default="index",
        help="'index': the persistent engine; 'keyword': in-memory BM25",
    )
    parser.add_argument(
        "--sample", action="store_true", help="keyword engine only: load the bundled sample corpus"
    )
    parser.add_argument("--read-only", action="store_true", help="refuse index writes")
    parser.add_argument(
        "--create",
        action="store_true",
        help="start an empty index when --index names none (else a missing index is an error)",
    )
    parser.add_argument(
        "--deadline",
        type=float,
        default=None,
        metavar="SECONDS",
        help="per-request deadline (§13.1), stdio and HTTP alike; default 60 s "
        "(writes at least 600 s), 0 for none",
    )
    parser.add_argument("--max-batch", type=int, default=1024, help="largest JSON-RPC batch")
    parser.add_argument(
        "--max-line-bytes", type=int, default=16 * 1024 * 1024, help="largest stdio message"
    )
    parser.add_argument(
        "--log-level",
        default=os.environ.get("RCPKIT_LOG_LEVEL", "WARNING"),
        help="stderr log level",
    )
    add_engine_arguments(parser)
    add_http_arguments(parser)
    add_observe_arguments(parser)


def run(args: argparse.Namespace) -> int:
    # §5.1: stdout carries protocol frames only; every diagnostic goes to stderr.
    logging.basicConfig(
        stream=sys.stderr,
        level=args.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    # Imported here, not above: declaring the options must stay cheap (numpy, models).
    from rcpkit.cli.observe_options import observer_from_args
    from rcpkit.observe.serving import observed
    from rcpkit.server.limits import resolve_deadline
    from rcpkit.server.runner import run_async

    if args.http is not None:
        workers = _workers(args)
        if workers > 1:
            from rcpkit.cli.http_serve import serve_workers_command

            # Each worker checks its tokens against its engine; the parent checks them first,
            # and must judge them as a worker will (issue 52: it refused tenant tokens).
            tenant_aware = args.engine in TENANT_AWARE_ENGINES
            return serve_workers_command(args, workers, tenant_aware=tenant_aware)
    try:
        observer, metrics_at = observer_from_args(args)
    except (ValueError, RuntimeError, OSError) as error:
        print(f"rcpkit serve: {error}", file=sys.stderr)
        return 2
    if _is_later_worker():
        metrics_at = None  # worker 0 serves the metrics port; its /metrics sums every worker
    if args.engine == "keyword":
        from rcpkit.engine.keyword import KeywordIndex
        from rcpkit.handlers.keyword import build_keyword_app, load_samples

        index = KeywordIndex()
        if args.sample:
            index.upsert(load_samples())
        app = build_keyword_app(index, writable=not args.read_only)
        closing: Callable[[], None] = _nothing
    else:
        from rcpkit.cli.engine import open_from_args
        from rcpkit.handlers.engine import build_engine_app
        from rcpkit.transport.http.workers import shared_folder

        engine = open_from_args(
            args, create=args.create, writable=not args.read_only, shared_vectors=shared_folder()
        )
        engine.warm()  # before the first frame is read: initialize means ready to retrieve
        app = build_engine_app(engine)
        # Closed when serving ends: the store saves its mirror (issue 34: a server that
        # never closed its engine left no index.mirror, and the next one rebuilt it all).
        closing = engine.close
        if observer is not None and observer.metrics is not None:
            observer.metrics.add_gauges(_index_gauges(engine), _INDEX_HELP)
    try:
        if args.http is not None:
            from rcpkit.cli.http_serve import serve_command

            tenant_aware = args.engine in TENANT_AWARE_ENGINES
            return serve_command(
                app.server,
                args,
                tenant_aware=tenant_aware,
                observer=observer,
                metrics_at=metrics_at,
            )
        serving = app.serve_stdio(
            deadline=resolve_deadline(args.deadline),
            max_batch=args.max_batch,
            max_line_bytes=args.max_line_bytes,
            observer=observer,
        )
        run_async(observed(observer, metrics_at, serving))
        return 0
    finally:
        closing()


def _nothing() -> None:
    """The keyword engine holds nothing to close."""


def _workers(args: argparse.Namespace) -> int:
    """How many processes serve HTTP: one inside a worker, else --workers or the default.

    The persistent engine allows one per core (each worker follows the index's
    commits; writes serialise in the store). The in-memory keyword engine keeps
    its corpus in the process, so it is served by one.
    """
    from rcpkit.transport.http.workers import default_workers, worker_index

    if worker_index() is not None:
        return 1
    if args.workers is not None:
        if args.engine == "keyword" and args.workers > 1:
            raise ValueError("--engine keyword keeps its corpus in one process: --workers 1")
        return int(args.workers)
    return default_workers() if args.engine == "index" else 1


def _is_later_worker() -> bool:
    from rcpkit.transport.http.workers import worker_index

    return worker_index() not in (None, 0)


_INDEX_HELP = {
    "rcp_index_documents": "live documents of the default tenant",
    "rcp_index_chunks": "live chunks of the default tenant",
    "rcp_index_version": "the latest index version (indexVersion)",
}


def _index_gauges(engine: Any) -> Callable[[], dict[str, float]]:
    def read() -> dict[str, float]:
        documents, chunks = engine.store.count()
        return {
            "rcp_index_documents": documents,
            "rcp_index_chunks": chunks,
            "rcp_index_version": engine.store.version,
        }

    return read
