"""When the index was last written: the time of its last commit, as the store records it.

``rcpkit stats`` once showed the index file's mtime, which SQLite moves on
reads too (opening a connection touches the file). The writers here record
the time of each commit that made a version in the store's settings instead:
``commit.time`` for the index (any tenant's write) and ``commit.time:TENANT``
for a tenant's own, so a tenant-scoped caller learns only when *it* last wrote
(§15.6). The time is written just after the commit, in a transaction of its
own: a crash in between loses that time, never the commit.
"""

from __future__ import annotations

import time
from typing import Any

__all__ = ["COMMIT_TIME_SETTING", "last_commit_time", "record_commit_time"]

COMMIT_TIME_SETTING = "commit.time"


def _name(tenant: str | None) -> str:
    return f"{COMMIT_TIME_SETTING}:{tenant}" if tenant else COMMIT_TIME_SETTING


def record_commit_time(store: Any, tenant: str | None, when: float | None = None) -> None:
    """Record ``when`` (default: now) as the last commit of the index and of ``tenant``."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() if when is None else when))
    store.set_setting(COMMIT_TIME_SETTING, stamp)
    if tenant:
        store.set_setting(_name(tenant), stamp)


def last_commit_time(store: Any, tenant: str | None = None) -> str | None:
    """The UTC time (``2026-12-04T08:58:06Z``) of the last recorded commit, else None."""
    value: str | None = store.setting(_name(tenant))
    return value
