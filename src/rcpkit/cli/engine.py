"""``rcpkit index`` and ``rcpkit query``: the engine from the command line.

``rcpkit eval`` lives in ``rcpkit.evaluation``: it measures any server over the wire.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
import time
from typing import Any

from rcpkit.codec import Request
from rcpkit.engine.config import load_config
from rcpkit.engine.engine import Engine
from rcpkit.engine.ingest import SourceDocument, iter_documents
from rcpkit.engine.ingest.indexer import index_documents
from rcpkit.engine.open import open_engine
from rcpkit.protocol.errors import RCPError
from rcpkit.server.context import RequestContext
from rcpkit.server.session import Call, Session

__all__ = ["db_command", "index_command", "open_from_args", "query_command"]

_COMMIT_EVERY = 64  # documents per transaction while indexing folders


def open_from_args(args: argparse.Namespace, **overrides: Any) -> Engine:
    overrides.setdefault("sparse", getattr(args, "sparse", None))
    overrides.setdefault("graph", getattr(args, "graph", None))
    overrides.setdefault("store", getattr(args, "store", None))
    config = load_config(args.config, index=args.index, embedder=args.embedder, **overrides)
    return open_engine(config)


def index_command(args: argparse.Namespace) -> int:
    """Index files and folders; re-runs only re-embed files whose content changed."""
    missing = [str(path) for path in args.paths if not path.exists()]
    if missing:
        raise ValueError(f"no such file or folder: {', '.join(missing)}")
    engine = open_from_args(args)
    started = time.perf_counter()
    added = unchanged = chunks = 0
    skipped: list[tuple[str, str]] = []
    pending: list[SourceDocument] = []

    def flush() -> None:
        nonlocal added, unchanged, chunks
        if not pending:
            return
        report = index_documents(
            engine,
            pending,
            contextual=not args.no_contextual,
            skip_unchanged=True,
            origin="ingest",
        )
        added += len(pending) - report.unchanged
        unchanged += report.unchanged
        chunks += report.chunks
        pending.clear()
        seen = added + unchanged
        print(f"\rindexing: {seen} documents, {chunks} new chunks", end="", file=sys.stderr)

    for item in iter_documents(args.paths):
        if isinstance(item, SourceDocument):
            pending.append(item)
            if len(pending) >= _COMMIT_EVERY:
                flush()
        else:
            skipped.append((str(item.path), item.reason))
    flush()
    print(file=sys.stderr)
    documents, total_chunks = engine.store.count()
    seconds = time.perf_counter() - started
    print(f"index {engine.config.index} (version {engine.store.version})")
    print(f"  {'indexed':<10} {added:>7} documents  {chunks:>7} chunks")
    print(f"  {'unchanged':<10} {unchanged:>7} documents")
    print(f"  {'skipped':<10} {len(skipped):>7} files")
    print(f"  {'total':<10} {documents:>7} documents  {total_chunks:>7} chunks   {seconds:.1f} s")
    for path, reason in skipped[:20]:
        print(f"    skipped {path}: {reason}")
    engine.close()
    return 0


def query_command(args: argparse.Namespace) -> int:
    """Retrieve through the same validation and gating as the server, print a table."""
    from rcpkit.handlers.engine import build_engine_app

    engine = open_from_args(args)
    app = build_engine_app(engine)
    session = Session(app.server)
    session.prepare(Request(0, "initialize", {"protocolVersion": 1}))
    params: dict[str, Any] = {"query": args.text, "k": args.k}
    if args.mode:
        params["mode"] = args.mode
    if args.fusion:
        params["fusion"] = {"method": args.fusion}
    if args.filter:
        params["filter"] = json.loads(args.filter)
    try:
        call = session.prepare(Request(1, "retrieve", params))
        assert isinstance(call, Call)
        result = call.registration.handler(
            call.params, RequestContext(1, "retrieve", {}, deadline=None)
        )
    except RCPError as error:
        print(
            f"rcpkit: {error}" + (f" (field {error.field})" if error.field else ""), file=sys.stderr
        )
        return 1
    if args.json:
        import msgspec

        print(msgspec.json.encode(result).decode())
        return 0
    _print_table(result)
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


def db_command(args: argparse.Namespace) -> int:
    """``rcpkit db migrate|status|reindex|defer-index --store URL``: schema and vector index."""
    from rcpkit.engine.open import is_postgres_url
    from rcpkit.engine.store import migrations
    from rcpkit.engine.store.postgres import connect

    config = load_config(args.config, store=args.store)
    if not is_postgres_url(config.store):
        raise ValueError("rcpkit db needs --store postgres://… (or RCPKIT_STORE)")
    assert config.store is not None
    latest = migrations.MIGRATIONS[-1].version
    with connect(config.store) as connection:
        if args.action == "status":
            applied = migrations.applied_version(connection)
            print(f"schema version {applied} (this rcpkit: {latest})")
            return 0 if applied == latest else 1
        if args.action in ("reindex", "defer-index"):
            return _vector_index(connection, args.action, latest)
        version, done = migrations.migrate(connection)
    for step in done:
        print(f"applied {step.version:04d}_{step.name}")
    print(f"schema version {version}" + ("" if done else " (up to date)"))
    return 0


def _vector_index(connection: Any, action: str, latest: int) -> int:
    """A bulk load: ``defer-index`` drops the HNSW index, ``reindex`` builds it once."""
    from rcpkit.engine.store import migrations
    from rcpkit.engine.store._pg_dense import defer_vector_index, rebuild_vector_index

    if migrations.applied_version(connection) != latest:
        raise ValueError("the store's schema is not current: run `rcpkit db migrate` first")
    if action == "reindex":
        print(rebuild_vector_index(connection))
        return 0
    dropped = defer_vector_index(connection)
    print(
        ("dropped the HNSW index" if dropped else "no HNSW index to drop")
        + "; dense recall scans exactly until `rcpkit db reindex`"
    )
    return 0
