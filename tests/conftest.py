"""Session-wide fixtures: the private PostgreSQL and the local SolrCloud some engine and
end-to-end tests share."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pytest

# `rcpkit serve --http` starts one process per core by default; the suite's servers
# are one process each unless a test asks for workers (tests/transport/http/test_http_workers.py).
os.environ.setdefault("RCPKIT_HTTP_WORKERS", "1")

# A `heavy` test's budget. The 60 s default catches a hang in an ordinary test; a test
# that by design reads a whole collection or runs the CLI dozens of times took longer
# than that on a loaded machine (issue 52: load 10-15 on 2 cores) without anything
# being wrong. Its budget is its own, so its outcome does not depend on the machine.
HEAVY_TIMEOUT = 900


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("heavy") and not item.get_closest_marker("timeout"):
            item.add_marker(pytest.mark.timeout(HEAVY_TIMEOUT))


@pytest.fixture(scope="session", autouse=True)
def _postgres_session() -> Iterator[None]:
    """Stop the session's PostgreSQL and SolrCloud (started lazily by ``pg_support`` and
    ``solr_support``) at the end."""
    yield
    pg_support = sys.modules.get("pg_support")
    if pg_support is not None:
        pg_support.stop_server()
    solr_support = sys.modules.get("solr_support")
    if solr_support is not None:
        solr_support.stop_cluster()


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A fresh database (pgvector installed) on the session's PostgreSQL, dropped after."""
    import pg_support

    url = pg_support.fresh_database()
    yield url
    pg_support.drop_database(url)


@pytest.fixture
def solr_url() -> Iterator[str]:
    """A fresh 2-shard collection on the session's SolrCloud, deleted after."""
    import solr_support

    url = solr_support.fresh_collection()
    yield url
    solr_support.drop_collection(url)
