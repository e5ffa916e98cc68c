"""The scale-out store: one PostgreSQL (+ pgvector) shared by many stateless server processes.

Everything that defines an answer lives in the database, so any process can
serve any retained version (§7.7.1) and accept any process's cursor (§10).
``store`` is :class:`PostgresStore`, built of ``connections``, ``writes`` and ``reads``;
``source`` feeds the query index, ``lexical`` answers in SQL a version the
mirror no longer holds, ``dense`` is pgvector's search, ``rows`` the COPY
helpers, ``errors`` the mapping of psycopg's errors, ``pgserver`` a private
PostgreSQL for trials and tests.
"""

from rcpkit.engine.store.postgres.connections import bound_by_deadline, connect
from rcpkit.engine.store.postgres.store import PostgresStore

__all__ = ["PostgresStore", "bound_by_deadline", "connect"]
