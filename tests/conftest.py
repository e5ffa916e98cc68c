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


def pytest_configure(config: pytest.Config) -> None:
    # `make test` runs `-n 2 --dist loadfile`. xdist then hands out files by their number
    # of tests, most first, so a file of one long test (a quality floor: 150 s) was handed
    # out last and ran alone at the end. The order below is the one it follows instead.
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("heavy") and not item.get_closest_marker("timeout"):
            item.add_marker(pytest.mark.timeout(HEAVY_TIMEOUT))
    items[:] = _heavy_files_first(items)


def _heavy_files_first(items: list[pytest.Item]) -> list[pytest.Item]:
    """Files with a test on the heavy budget first (in collection order), then the others
    by their number of tests, most first (what xdist's own order was); a file's tests
    stay together and in order, so `--dist loadfile` hands out whole files in this order."""
    files: dict[str, list[pytest.Item]] = {}
    for item in items:
        files.setdefault(item.nodeid.split("::", 1)[0], []).append(item)
    heavy: list[list[pytest.Item]] = []
    light: list[list[pytest.Item]] = []
    for tests in files.values():
        (heavy if any(map(_on_heavy_budget, tests)) else light).append(tests)
    light.sort(key=len, reverse=True)  # stable: equal sizes keep collection order
    return [item for tests in [*heavy, *light] for item in tests]


def _on_heavy_budget(item: pytest.Item) -> bool:
    marker = item.get_closest_marker("timeout")
    budget = marker and (marker.args[0] if marker.args else marker.kwargs.get("timeout"))
    return isinstance(budget, int | float) and budget >= HEAVY_TIMEOUT


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
