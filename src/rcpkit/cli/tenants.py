"""``rcpkit tenants list | delete TENANT``: the tenants of an index, and removing one (issue 34).

A tenant is the name a tenant-scoped token carries (§15.6). ``delete`` removes
everything of it: documents, chunks, postings, vectors, versions, statistics,
idempotency keys, engine state, its knowledge graph and the cache files that
may hold its text (``rcpkit.engine.ingest.tenants``). Stop the servers of an
embedded index first; a shared PostgreSQL store's servers follow the deletion,
and each rebuilds its own ``postgres.mirror`` when it restarts.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict

from rcpkit.cli.options import add_engine_arguments
from rcpkit.cli.words import counted

__all__ = ["HELP", "add_arguments", "run"]

HELP = "list the tenants of an index, or delete one with all its data"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", required=True)
    listing = actions.add_parser("list", help="each tenant with its documents, chunks, version")
    listing.add_argument("--json", action="store_true", help="one JSON object per line")
    add_engine_arguments(listing)
    delete = actions.add_parser("delete", help="delete a tenant with every row, graph and cache")
    delete.add_argument("tenant", help="the tenant's name, as its token's `tenant` spells it")
    delete.add_argument("--dry-run", action="store_true", help="show what would go, delete none")
    add_engine_arguments(delete)


def run(args: argparse.Namespace) -> int:
    from rcpkit.cli.engine import open_from_args
    from rcpkit.engine.ingest.tenants import cache_files, delete_tenant, list_tenants

    if args.action == "delete" and not args.tenant.strip():
        raise ValueError("name a tenant (the unscoped space is not a tenant to delete)")
    engine = open_from_args(args, create=False)
    index = engine.config.index
    try:
        if args.action == "list":
            for figures in list_tenants(engine):
                if args.json:
                    print(json.dumps(asdict(figures)))
                else:
                    name = figures.tenant or "(unscoped)"
                    documents = counted(figures.documents, "document")
                    chunks = counted(figures.chunks, "chunk")
                    print(f"{name}\t{documents}\t{chunks}\tversion {figures.version}")
            return 0
        removal = delete_tenant(engine, args.tenant, dry_run=args.dry_run)
    finally:
        engine.close()
    if removal is None:
        print(f"rcpkit: no tenant {args.tenant!r} in this index (nothing deleted)", file=sys.stderr)
        return 1
    verb = "would delete" if args.dry_run else "deleted"
    print(f"{verb} tenant {removal.tenant!r}: {counted(removal.documents, 'document')}, "
          f"{counted(removal.chunks, 'chunk')}")  # fmt: skip
    caches = cache_files(index)
    for name in [*removal.files, *(str(cache) for cache in caches)]:
        print(f"{verb} {name}")
    if not args.dry_run:
        for cache in caches:
            cache.unlink(missing_ok=True)
        purged = ", ".join(f"{table} {rows}" for table, rows in removal.rows.items() if rows)
        print(f"rows purged: {purged or 'none'}")
    return 0
