"""Tenant isolation (§15.6): the token decides the tenant; ids, cursors and errors never leak."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from http_apps import Probe, TenantStore, probe_app, tenant_app
from http_support import Serve, rpc

from rcpkit.transport.http import Credential, Credentials, HttpConfig

CREDENTIALS = Credentials(
    [
        Credential.of("acme-app", "acme-secret", tenant="acme"),
        Credential.of("globex-app", "globex-secret", tenant="globex"),
    ]
)
CONFIG = HttpConfig(credentials=CREDENTIALS, tenant_aware=True)


class Tenant:
    def __init__(self, url: str, token: str) -> None:
        self.url = url
        self.http = httpx.Client(timeout=30.0, headers={"authorization": f"Bearer {token}"})

    def call(self, method: str, params: dict[str, Any]) -> Any:
        return self.http.post(f"{self.url}/{method}", json=rpc(1, method, params)).json()

    def hits(self, query: str, **options: Any) -> tuple[list[tuple[str, str]], Any]:
        result = self.call("retrieve", {"query": query, **options})["result"]
        return [(hit["id"], hit["text"]) for hit in result["hits"]], result.get("nextCursor")


@pytest.fixture
def tenants(serve: Serve) -> Any:
    live = serve(tenant_app(TenantStore()), CONFIG)
    acme, globex = Tenant(live.url, "acme-secret"), Tenant(live.url, "globex-secret")
    yield acme, globex
    acme.http.close()
    globex.http.close()


def test_each_tenant_retrieves_only_its_own_documents(tenants: Any) -> None:
    acme, globex = tenants
    acme.call("index/add", {"documents": [{"id": "plan", "text": "alpha acme plan"}]})
    globex.call("index/add", {"documents": [{"id": "memo", "text": "alpha globex memo"}]})
    assert acme.hits("alpha")[0] == [("plan", "alpha acme plan")]
    assert globex.hits("alpha")[0] == [("memo", "alpha globex memo")]


def test_the_same_id_in_two_tenants_names_two_documents(tenants: Any) -> None:
    acme, globex = tenants
    acme.call("index/add", {"documents": [{"id": "doc", "text": "beta from acme"}]})
    globex.call("index/add", {"documents": [{"id": "doc", "text": "beta from globex"}]})
    assert acme.hits("beta")[0] == [("doc", "beta from acme")]
    # Deleting "doc" as globex removes globex's, and says nothing about acme's.
    assert globex.call("index/delete", {"ids": ["doc"]})["result"]["deleted"] == 1
    assert globex.call("index/delete", {"ids": ["doc"]})["result"]["deleted"] == 0
    assert acme.hits("beta")[0] == [("doc", "beta from acme")]


def test_another_tenants_cursor_is_answered_like_a_made_up_one(tenants: Any) -> None:
    acme, globex = tenants
    documents = [{"id": f"d{n}", "text": f"gamma {n}"} for n in range(3)]
    acme.call("index/add", {"documents": documents})
    page, cursor = acme.hits("gamma", k=2)
    assert [id for id, _ in page] == ["d0", "d1"] and cursor is not None
    assert [id for id, _ in acme.hits("gamma", k=2, cursor=cursor)[0]] == ["d2"]
    foreign = globex.call("retrieve", {"query": "gamma", "k": 2, "cursor": cursor})
    made_up = globex.call("retrieve", {"query": "gamma", "k": 2, "cursor": "c999"})
    assert foreign == made_up
    assert foreign["error"]["code"] == -32015


def test_the_tenant_comes_from_the_credential_never_from_the_request(serve: Serve) -> None:
    probe = Probe()
    live = serve(probe_app(probe), CONFIG)
    acme = Tenant(live.url, "acme-secret")
    try:
        acme.call("retrieve", {"query": "q", "_meta": {"tenant": "globex"}, "tenant": "globex"})
    finally:
        acme.http.close()
    assert probe.tenants == ["acme"]


def test_without_auth_the_tenant_is_none(serve: Serve, client: httpx.Client) -> None:
    probe = Probe()
    live = serve(probe_app(probe))
    client.post(f"{live.url}/retrieve", json=rpc(1, "retrieve", {"query": "q"}))
    assert probe.tenants == [None]
