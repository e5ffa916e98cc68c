"""The shard registry: which PostgreSQL databases hold the collection, and where a document lives.

A registry is a TOML (or JSON) file naming the shards in order::

    required = false            # a shard down fails a retrieve (true) or degrades it
    lexical = "memory"          # BM25's read side in each server (or "database")
    [[shard]]
    name = "a"
    url = "postgresql://10.0.0.1:5432/rcpkit"
    [[shard]]
    name = "b"
    url = "postgresql://10.0.0.2:5432/rcpkit"

A document's home is a stable function of (tenant, document id) and the number
of shards: Lamping and Veach's jump consistent hash of its 64-bit BLAKE2b
digest. Adding a shard at the end moves only the documents the new shard takes
(about 1/S of them); none moves between the old ones, so a rebalance copies to
one shard and deletes from the others. Shards are identified by position:
reordering or removing entries re-homes documents, so the registry only grows.

``lexical``: where BM25 ranks. ``"memory"`` (the default): every server holds each
shard's postings in memory (the query index's mirror), the fastest reads, but
every server then holds the whole collection's. ``"database"``: each shard ranks
in its own database, in SQL, with the collection's statistics (the same
scores), so a server holds no shard's postings and the collection can outgrow
one server's memory; dense search is in the databases either way (pgvector).
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["MAX_SHARDS", "Registry", "Shard", "home", "is_registry", "jump_hash", "load_registry"]

MAX_SHARDS = 64  # a global chunk key is local key * MAX_SHARDS + shard position
LEXICAL = ("memory", "database")

_GOLDEN = 2862933555777941757  # jump hash's linear congruential multiplier
_MASK = (1 << 64) - 1


@dataclass(frozen=True, slots=True)
class Shard:
    name: str
    url: str


@dataclass(frozen=True, slots=True)
class Registry:
    shards: tuple[Shard, ...]
    # True: a retrieve with a shard down fails (-32010, the shard named); False: it is
    # answered from the others, marked degraded (writes are never partial).
    required: bool = False
    path: Path | None = None
    lexical: str = "memory"  # where BM25 ranks: "memory" (each server) or "database"

    def home(self, tenant: str | None, doc_id: str) -> int:
        """The position of the shard holding ``doc_id`` of ``tenant``."""
        return home(tenant, doc_id, len(self.shards))


def jump_hash(key: int, buckets: int) -> int:
    """Lamping & Veach (2014): a bucket in [0, buckets), moving 1/n of keys when n grows."""
    if buckets <= 0:
        raise ValueError("at least one bucket")
    bucket, candidate = -1, 0
    while candidate < buckets:
        bucket = candidate
        key = (key * _GOLDEN + 1) & _MASK
        candidate = int((bucket + 1) * (float(1 << 31) / float((key >> 33) + 1)))
    return bucket


def home(tenant: str | None, doc_id: str, shards: int) -> int:
    """The home shard of a document among ``shards``: jump hash of (tenant, id)."""
    digest = hashlib.blake2b(f"{tenant or ''}\0{doc_id}".encode(), digest_size=8).digest()
    return jump_hash(int.from_bytes(digest, "big"), shards)


def is_registry(store: str | None) -> bool:
    """Whether ``--store`` names a shard registry file (not a database URL)."""
    return bool(store) and str(store).endswith((".toml", ".json")) and Path(str(store)).is_file()


def load_registry(path: Path) -> Registry:
    """The registry in ``path``; ValueError naming what is wrong."""
    try:
        text = path.read_text(encoding="utf-8")
        raw: Any = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    except (OSError, ValueError) as error:
        raise ValueError(f"cannot read the shard registry {path}: {error}") from None
    entries = raw.get("shard", raw.get("shards")) if isinstance(raw, dict) else None
    if not isinstance(entries, list) or not entries:
        raise ValueError(f"{path}: no [[shard]] entries")
    if len(entries) > MAX_SHARDS:
        raise ValueError(f"{path}: at most {MAX_SHARDS} shards")
    shards: list[Shard] = []
    for number, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("url"), str):
            raise ValueError(f"{path}: shard {number} needs a url")
        url = entry["url"]
        if not url.startswith(("postgres://", "postgresql://")):
            raise ValueError(f"{path}: shard {number}: a postgres:// URL, not {url!r}")
        shards.append(Shard(str(entry.get("name") or f"shard{number}"), url))
    names = [shard.name for shard in shards]
    if len(set(names)) != len(names):
        raise ValueError(f"{path}: shard names must differ")
    required = raw.get("required", False)
    if not isinstance(required, bool):
        raise ValueError(f"{path}: required is true or false")
    lexical = raw.get("lexical", "memory")
    if lexical not in LEXICAL:
        raise ValueError(f"{path}: lexical is one of {', '.join(LEXICAL)}, not {lexical!r}")
    return Registry(tuple(shards), required, path, lexical)
