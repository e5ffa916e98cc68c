"""The persistent engine behind HTTP with tenant-scoped tokens: each token sees its own corpus."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from http_support import Serve, rpc

from rcpkit.cli.serve import TENANT_AWARE_ENGINES
from rcpkit.transport.http import Credential, Credentials, HttpConfig


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Any]:
    from engine_support import make_engine  # the deterministic hashing embedder, no model

    engine = make_engine(tmp_path / "index")
    yield engine
    engine.close()


def test_the_persistent_engine_is_declared_tenant_aware() -> None:
    assert "index" in TENANT_AWARE_ENGINES
    assert "keyword" not in TENANT_AWARE_ENGINES


def test_two_tenant_tokens_over_http_see_two_corpora(serve: Serve, engine: Any) -> None:
    from rcpkit.handlers.engine import build_engine_app

    credentials = Credentials(
        [
            Credential.of("acme-app", "acme-secret", tenant="acme"),
            Credential.of("globex-app", "globex-secret", tenant="globex"),
        ]
    )
    live = serve(build_engine_app(engine), HttpConfig(credentials=credentials, tenant_aware=True))

    def as_tenant(token: str) -> httpx.Client:
        return httpx.Client(timeout=30.0, headers={"authorization": f"Bearer {token}"})

    with as_tenant("acme-secret") as acme, as_tenant("globex-secret") as globex:

        def call(http: httpx.Client, method: str, params: dict[str, Any]) -> Any:
            return http.post(f"{live.url}/{method}", json=rpc(1, method, params)).json()

        call(acme, "index/add", {"documents": [{"id": "plan", "text": "acme secret plan"}]})
        call(globex, "index/add", {"documents": [{"id": "plan", "text": "globex plan"}]})
        theirs = call(globex, "retrieve", {"query": "acme secret plan", "k": 5})["result"]
        deleted = call(globex, "index/delete", {"ids": ["plan"]})["result"]
        mine = call(acme, "retrieve", {"query": "secret plan", "k": 5})["result"]
    assert [hit["text"] for hit in theirs["hits"]] == ["globex plan"]
    assert deleted["deleted"] == 1  # globex's own "plan"; acme's is untouched
    assert [hit["text"] for hit in mine["hits"]] == ["acme secret plan"]
