"""Versioned schema migrations of the PostgreSQL store, run by ``rcpkit db migrate``.

The steps are the ``NNNN_name.sql`` files of this folder; ``steps`` loads them,
reads what a database has applied and applies the rest.
"""

from rcpkit.engine.store.migrations.steps import (
    LOCK_KEY,
    MIGRATIONS,
    Migration,
    applied_version,
    migrate,
)

__all__ = ["LOCK_KEY", "MIGRATIONS", "Migration", "applied_version", "migrate"]
