"""Stores: the ``Store`` protocol, SQLite (+ its dense index), PostgreSQL + pgvector, migrations."""
