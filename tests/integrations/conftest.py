from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

# Haystack reports usage unless told not to; no test may reach the network.
os.environ["HAYSTACK_TELEMETRY_ENABLED"] = "False"

from integrations_support import http_server, populate

from rcpkit.integrations import Connection


@pytest.fixture(scope="module")
def corpus_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real HTTP ``rcpkit serve`` over the small corpus, shared by one module's tests."""
    index: Path = tmp_path_factory.mktemp("index")
    with http_server(index) as url:
        with Connection.http(url) as connection:
            populate(connection)
        yield url


@pytest.fixture
def empty_url(tmp_path: Path) -> Iterator[str]:
    """A fresh, empty HTTP ``rcpkit serve`` for a test that writes."""
    with http_server(tmp_path / "index") as url:
        yield url
