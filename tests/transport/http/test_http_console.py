"""The web console's route (`HttpConfig(console=True)`): public files at /ui under a strict
CSP, served before auth; the API behind them keeps its auth and origin rules (§5.2, §15.6)."""

from __future__ import annotations

import httpx
from http_apps import Probe, probe_app
from http_support import JSON, Serve, rpc

from rcpkit.transport.http import Credential, Credentials, HttpConfig

TOKENS = Credentials([Credential.of("console", "console-secret")])


def test_the_console_is_public_while_every_rcp_call_still_needs_the_token(
    serve: Serve, client: httpx.Client
) -> None:
    server = serve(probe_app(Probe()), HttpConfig(credentials=TOKENS, console=True))
    page = client.get(f"{server.root}/ui")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    policy = page.headers["content-security-policy"]
    assert "script-src 'self';" in policy and "unsafe-inline" not in policy
    assert "frame-ancestors 'none'" in policy
    assert client.get(f"{server.root}/ui/config.json").json() == {"api": "/rcp", "metrics": None}
    refused = client.post(f"{server.url}/info", json=rpc(1, "info"))
    assert refused.status_code == 401
    allowed = client.post(
        f"{server.url}/info",
        json=rpc(1, "info"),
        headers={"authorization": "Bearer console-secret"},
    )
    assert allowed.status_code == 200


def test_the_consoles_own_origin_may_call_but_another_page_may_not(
    serve: Serve, client: httpx.Client
) -> None:
    server = serve(probe_app(Probe()), HttpConfig(console=True))
    own = client.post(f"{server.url}/ping", json=rpc(1, "ping"), headers={"origin": server.root})
    localhost = server.root.replace("127.0.0.1", "localhost")
    named = client.post(f"{server.url}/ping", json=rpc(2, "ping"), headers={"origin": localhost})
    # A DNS-rebinding page has its own host name in Origin, whatever address it reached.
    rebound = server.root.replace("127.0.0.1", "evil.example")
    other = client.post(f"{server.url}/ping", json=rpc(3, "ping"), headers={"origin": rebound})
    assert (own.status_code, named.status_code, other.status_code) == (200, 200, 403)


def test_without_the_console_its_own_origin_is_refused_like_any_other(
    serve: Serve, client: httpx.Client
) -> None:
    server = serve(probe_app(Probe()), HttpConfig())
    assert client.get(f"{server.root}/ui").status_code == 404
    page = client.post(f"{server.url}/ping", json=rpc(1, "ping"), headers={"origin": server.root})
    assert page.status_code == 403


def test_only_shipped_files_are_served_and_only_to_get_and_head(
    serve: Serve, client: httpx.Client
) -> None:
    server = serve(probe_app(Probe()), HttpConfig(console=True))
    script = client.get(f"{server.root}/ui/js/main.mjs")
    assert script.headers["content-type"] == "text/javascript; charset=utf-8"
    assert script.headers["x-content-type-options"] == "nosniff"
    head = client.head(f"{server.root}/ui/console.css")
    assert head.status_code == 200 and head.content == b""
    assert int(head.headers["content-length"]) > 1000
    for path in ("/ui/js/../../assets.py", "/ui/%2e%2e/assets.py", "/ui/js", "/ui/nope.css"):
        assert client.get(f"{server.root}{path}").status_code == 404, path
    posted = client.post(f"{server.root}/ui", content=b"{}", headers=JSON)
    assert posted.status_code == 405 and posted.headers["allow"] == "GET, HEAD"
