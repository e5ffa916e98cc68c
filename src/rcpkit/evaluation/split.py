"""A fixed development / held-out split of a collection's queries, by a hash of the query id.

Every method and parameter of the default pipeline is chosen on ``dev``; the
``heldout`` half is only reported. The split depends on nothing but the query
id (SHA-256 of ``"rcpkit-split/1:" + id``, first byte even → dev), so it is
the same on every machine, for every collection, and independent of the
qrels: it cannot be bent towards easy queries.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

__all__ = ["SPLITS", "split_of", "split_queries"]

SPLITS = ("all", "dev", "heldout")
_SALT = "rcpkit-split/1:"


def split_of(query_id: str) -> str:
    """``"dev"`` or ``"heldout"`` for one query id."""
    first = hashlib.sha256((_SALT + query_id).encode("utf-8")).digest()[0]
    return "dev" if first % 2 == 0 else "heldout"


def split_queries(query_ids: Iterable[str], half: str) -> list[str]:
    """The ids of ``half`` (``all``, ``dev`` or ``heldout``), in their given order."""
    if half not in SPLITS:
        raise ValueError(f"the query split is one of {', '.join(SPLITS)}, not {half!r}")
    return [q for q in query_ids if half == "all" or split_of(q) == half]
