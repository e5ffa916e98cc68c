"""Gateway cursors between tenants over HTTP (issue 35, last paragraph).

One `rcpkit serve --http` engine with two tenant-scoped tokens; one gateway per
tenant (each registry holds its tenant's engine token), all real processes. A
cursor that tenant alpha's gateway minted, replayed at tenant beta's gateway,
must never page through alpha's documents: with gateways of distinct keys it is
refused exactly as a made-up cursor is; with replicas sharing
``RCPKIT_GATEWAY_CURSOR_KEY`` it pages beta's own corpus only (the engine scopes
by the token, whatever the cursor pins). A gateway offered tenant-scoped tokens
itself refuses to start: it cannot scope what its engines return.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest
from gateway_support import GATEWAY, PYTHON, announced_http, write_registry

_TOKENS = {"ALPHA_TOKEN": "alpha-engine-token", "BETA_TOKEN": "beta-engine-token"}


def _rpc(url: str, method: str, params: dict[str, Any], token: str | None = None) -> Any:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return httpx.post(f"{url}/{method}", json=body, headers=headers, timeout=30).json()


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[str]:
    command = [PYTHON, "-m", "rcpkit", "serve", "--http", "127.0.0.1:0", "--engine", "index"]
    command += ["--index", str(tmp_path / "index"), "--create", "--embedder", "hashing:64"]
    tokens = f"{_TOKENS['ALPHA_TOKEN']}@alpha,{_TOKENS['BETA_TOKEN']}@beta"
    with announced_http(command, {"RCPKIT_HTTP_TOKENS": tokens}, timeout=60) as (url, _):
        for tenant, token in (("alpha", _TOKENS["ALPHA_TOKEN"]), ("beta", _TOKENS["BETA_TOKEN"])):
            documents = [
                {"id": f"{tenant}-doc{i}", "text": f"{tenant} ledger harbour shipment {i}"}
                for i in range(12)
            ]
            added = _rpc(url, "index/add", {"documents": documents}, token)
            assert "result" in added, added
        yield url


def _gateways(
    stack: ExitStack, tmp_path: Path, engine: str, keys: tuple[str, str]
) -> tuple[str, str]:
    urls = []
    for tenant, key in zip(("ALPHA", "BETA"), keys, strict=True):
        registry = write_registry(
            tmp_path / f"{tenant.lower()}-{key}.json",
            [{"id": "ledger", "transport": "http", "url": engine, "tokenEnv": f"{tenant}_TOKEN"}],
        )
        command = [*GATEWAY, str(registry), "--http", "127.0.0.1:0"]
        env = {**_TOKENS, "RCPKIT_GATEWAY_CURSOR_KEY": key}
        url, _ = stack.enter_context(announced_http(command, env, timeout=60))
        urls.append(url)
    return urls[0], urls[1]


def _ids(answer: dict[str, Any]) -> list[str]:
    return [str(hit["id"]) for hit in answer.get("result", {}).get("hits", [])]


_QUERY = {"query": "ledger harbour shipment", "k": 3}


def test_a_cursor_of_another_tenants_gateway_is_refused_as_a_made_up_one(
    engine: str, tmp_path: Path
) -> None:
    with ExitStack() as stack:
        alpha, beta = _gateways(stack, tmp_path, engine, ("key-one", "key-two"))
        first = _rpc(alpha, "retrieve", _QUERY)
        assert _ids(first) and all(i.startswith("alpha-") for i in _ids(first))
        cursor = first["result"]["nextCursor"]
        replayed = _rpc(beta, "retrieve", {**_QUERY, "cursor": cursor})
        made_up = _rpc(beta, "retrieve", {**_QUERY, "cursor": "bm9wZQ.bm9wZQ"})
    assert "result" not in replayed
    assert replayed["error"] == made_up["error"]
    assert replayed["error"]["code"] == -32602
    assert "alpha" not in str(replayed)


def test_replicas_sharing_a_key_page_only_the_callers_own_tenant(
    engine: str, tmp_path: Path
) -> None:
    with ExitStack() as stack:
        alpha, beta = _gateways(stack, tmp_path, engine, ("shared-key", "shared-key"))
        first = _rpc(alpha, "retrieve", _QUERY)
        cursor = first["result"]["nextCursor"]
        replayed = _rpc(beta, "retrieve", {**_QUERY, "cursor": cursor})
        own = _rpc(beta, "retrieve", _QUERY)
    assert "alpha" not in str(replayed)  # no id, text or version of alpha's
    assert all(i.startswith("beta-") for i in _ids(replayed))
    assert all(i.startswith("beta-") for i in _ids(own))


def test_a_gateway_refuses_tenant_scoped_tokens(tmp_path: Path) -> None:
    registry = write_registry(
        tmp_path / "r.json",
        [{"id": "ledger", "transport": "http", "url": "http://127.0.0.1:9/"}],
    )
    done = subprocess.run(
        [*GATEWAY, str(registry), "--http", "127.0.0.1:0"],
        env={**os.environ, "RCPKIT_HTTP_TOKENS": "t1@alpha"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    assert "tenant-scoped credentials" in done.stderr
