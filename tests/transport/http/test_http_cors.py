"""CORS (§5.2): configured origins, OPTIONS preflight, and no other browser origin served."""

from __future__ import annotations

import httpx
from http_apps import Probe, probe_app
from http_support import Serve, rpc

from rcpkit.transport.http import Credential, Credentials, HttpConfig

ORIGIN = "https://app.example"
CONFIG = HttpConfig(
    cors_origins=(ORIGIN,), credentials=Credentials([Credential.of("web", "web-secret")])
)


def preflight(client: httpx.Client, url: str, origin: str) -> httpx.Response:
    return client.options(
        f"{url}/retrieve",
        headers={
            "origin": origin,
            "access-control-request-method": "POST",
            "access-control-request-headers": "authorization, content-type, rcp-session",
        },
    )


def test_a_preflight_from_an_allowed_origin_needs_no_credentials(
    serve: Serve, client: httpx.Client
) -> None:
    live = serve(probe_app(Probe()), CONFIG)
    response = preflight(client, live.url, ORIGIN)
    assert response.status_code == 200
    assert response.headers["access-control-allow-origin"] == ORIGIN
    assert "POST" in response.headers["access-control-allow-methods"]
    allowed = response.headers["access-control-allow-headers"].lower()
    assert {"authorization", "content-type", "rcp-session"} <= {
        header.strip() for header in allowed.split(",")
    }


def test_a_preflight_from_another_origin_is_refused(serve: Serve, client: httpx.Client) -> None:
    live = serve(probe_app(Probe()), CONFIG)
    response = preflight(client, live.url, "https://evil.example")
    assert response.status_code == 400
    assert "access-control-allow-origin" not in response.headers


def test_an_allowed_origin_may_read_the_answer_and_its_headers(
    serve: Serve, client: httpx.Client
) -> None:
    live = serve(probe_app(Probe()), CONFIG)
    headers = {"origin": ORIGIN, "authorization": "Bearer web-secret"}
    response = client.post(f"{live.url}/ping", json=rpc(1, "ping"), headers=headers)
    assert response.status_code == 200
    assert response.headers["access-control-allow-origin"] == ORIGIN
    assert "retry-after" in response.headers["access-control-expose-headers"].lower()


def test_a_request_from_an_origin_not_configured_is_refused(
    serve: Serve, client: httpx.Client
) -> None:
    # Also what a DNS-rebinding page on a loopback server looks like.
    open_server = serve(probe_app(Probe()))
    configured = serve(probe_app(Probe()), CONFIG)
    for url, extra in (
        (open_server.url, {}),
        (configured.url, {"authorization": "Bearer web-secret"}),
    ):
        headers = {"origin": "https://evil.example", **extra}
        response = client.post(f"{url}/ping", json=rpc(1, "ping"), headers=headers)
        assert response.status_code == 403
        assert response.json()["error"]["code"] == -32012
