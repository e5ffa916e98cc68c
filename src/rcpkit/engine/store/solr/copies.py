"""Copies of the store's settings on every shard: a store opens with its records' shard down.

The store's records (the version counters, the settings, the idempotency keys)
share one routing prefix, so one shard holds them all (``store._RECORDS``). A
server opening reads settings before anything else: the model the index is
bound to and its dimension (§15.7), the BM25 parameters, the cursor secret
(§10), the declared filter fields. With that one shard down, none could be
read, and no server could start, though every other shard could answer.

So each setting is also written as a copy on every shard, after its record (a
failed record write leaves the copies as they were): a document whose routing
prefix hashes into that shard's range. SolrCloud's compositeId router takes the
top 16 bits of a document's hash from its prefix's murmur3 hash, so the prefix
alone chooses the shard (the ranges a collection is created with are split on
those bits). A setting is read from its copies only when its record cannot be.
The version counter is not copied: a stale copy of it would be a wrong version,
where a missing one is an honest "unknown".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["copy_ids", "murmur3_32", "shard_of", "shard_prefixes", "shard_ranges"]

_PREFIX = "rcpkit"  # + a number: the first one that lands on the shard
_TRIES = 1 << 16  # prefixes tried for one shard before giving up on it
_MASK = 0xFFFFFFFF


def murmur3_32(data: bytes, seed: int = 0) -> int:
    """MurmurHash3 x86 32-bit, as Solr's ``Hash.murmurhash3_x86_32`` hashes a UTF-8 id."""
    c1, c2 = 0xCC9E2D51, 0x1B873593
    hashed = seed
    whole = len(data) & ~3
    for start in range(0, whole, 4):
        hashed ^= _scrambled(int.from_bytes(data[start : start + 4], "little"), c1, c2)
        hashed = _rotated(hashed, 13)
        hashed = (hashed * 5 + 0xE6546B64) & _MASK
    tail = int.from_bytes(data[whole:], "little")
    if len(data) > whole:
        hashed ^= _scrambled(tail, c1, c2)
    hashed ^= len(data)
    hashed ^= hashed >> 16
    hashed = (hashed * 0x85EBCA6B) & _MASK
    hashed ^= hashed >> 13
    hashed = (hashed * 0xC2B2AE35) & _MASK
    return hashed ^ (hashed >> 16)


def _scrambled(block: int, c1: int, c2: int) -> int:
    return (_rotated((block * c1) & _MASK, 15) * c2) & _MASK


def _rotated(value: int, bits: int) -> int:
    return ((value << bits) | (value >> (32 - bits))) & _MASK


def _signed(value: int) -> int:
    return value - (1 << 32) if value & 0x80000000 else value


def _bounds(text: str) -> tuple[int, int]:
    low, high = text.split("-")
    return _signed(int(low, 16)), _signed(int(high, 16))


def shard_of(prefix: str, ranges: Mapping[str, str]) -> str | None:
    """The shard whose range holds every id routed by ``prefix`` (None: it straddles two)."""
    top = murmur3_32(prefix.encode()) & 0xFFFF0000
    first, last = _signed(top), _signed(top | 0xFFFF)
    for shard, span in ranges.items():
        low, high = _bounds(span)
        if low <= first and last <= high:
            return shard
    return None


def shard_ranges(shards: Mapping[str, Any]) -> dict[str, str]:
    """Each shard's hash range from CLUSTERSTATUS's ``shards`` (none: not hash-routed)."""
    return {name: str(shard["range"]) for name, shard in shards.items() if shard.get("range")}


def shard_prefixes(shards: Mapping[str, Any]) -> dict[str, str]:
    """A routing prefix for each shard with a hash range (CLUSTERSTATUS's ``shards``)."""
    ranges = shard_ranges(shards)
    found: dict[str, str] = {}
    for number in range(_TRIES):
        if len(found) == len(ranges):
            break
        prefix = f"{_PREFIX}{number}"
        shard = shard_of(prefix, ranges)
        if shard is not None:
            found.setdefault(shard, prefix)
    return found


def copy_ids(name: str, prefixes: Mapping[str, str]) -> dict[str, str]:
    """Each shard's copy of setting ``name``: shard -> document id."""
    return {shard: f"{prefix}!c{name}" for shard, prefix in sorted(prefixes.items())}
