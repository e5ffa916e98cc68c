"""Auth before anything else (§5.2, §15.6): headers only, uniform -32012, writes scoped."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from http_apps import Probe, probe_app
from http_support import Serve, rpc

from rcpkit.server.app import App
from rcpkit.transport.http import Credential, Credentials, HttpApp, HttpConfig

TOKENS = Credentials(
    [Credential.of("writer", "w-secret"), Credential.of("reader", "r-secret", write=False)]
)
WRITER = {"authorization": "Bearer w-secret"}


def test_nothing_answers_an_unauthenticated_caller_not_even_initialize_or_info(
    serve: Serve, client: httpx.Client
) -> None:
    live = serve(probe_app(Probe()), HttpConfig(credentials=TOKENS))
    bodies = [
        rpc(1, "initialize", {"protocolVersion": 1}),
        rpc(2, "info"),
        rpc(3, "ping"),
        rpc(4, "embed", {"inputs": ["x"]}),  # would be -32003 once authenticated
        rpc(5, "frobnicate"),  # would be -32004 once authenticated
    ]
    answers = set()
    for body in bodies:
        response = client.post(f"{live.url}/{body['method']}", json=body)
        assert response.status_code == 401
        answers.add(response.content)
    # §15.6: one uniform answer, so a probe learns nothing about capabilities.
    assert len(answers) == 1
    assert b"capabilities" not in answers.pop()
    authorized = client.post(f"{live.url}/info", json=rpc(6, "info"), headers=WRITER)
    assert "capabilities" in authorized.json()["result"]


def test_bearer_tokens_and_api_keys_are_read_from_headers(
    serve: Serve, client: httpx.Client
) -> None:
    live = serve(probe_app(Probe()), HttpConfig(credentials=TOKENS))
    url = f"{live.url}/ping"
    assert client.post(url, json=rpc(1, "ping"), headers=WRITER).status_code == 200
    assert client.post(url, json=rpc(2, "ping"), headers={"x-api-key": "r-secret"}).status_code == (
        200
    )
    for wrong in ({"authorization": "Bearer nope"}, {"authorization": "Basic w-secret"}):
        assert client.post(url, json=rpc(3, "ping"), headers=wrong).status_code == 401


def test_credentials_in_params_are_never_accepted(serve: Serve, client: httpx.Client) -> None:
    live = serve(probe_app(Probe()), HttpConfig(credentials=TOKENS))
    smuggled = [
        {"token": "w-secret"},
        {"apiKey": "w-secret"},
        {"authorization": "Bearer w-secret"},
        {"_meta": {"authorization": "Bearer w-secret", "token": "w-secret"}},
    ]
    for params in smuggled:
        response = client.post(f"{live.url}/ping", json=rpc(1, "ping", params))
        assert response.status_code == 401, params


def test_a_read_only_credential_reads_but_cannot_write(serve: Serve, client: httpx.Client) -> None:
    probe = Probe()
    live = serve(probe_app(probe), HttpConfig(credentials=TOKENS))
    reader = {"authorization": "Bearer r-secret"}
    read = client.post(
        f"{live.url}/retrieve", json=rpc(1, "retrieve", {"query": "q"}), headers=reader
    )
    assert "result" in read.json()
    add = rpc(2, "index/add", {"documents": [{"text": "t"}]})
    assert client.post(f"{live.url}/index/add", json=add, headers=reader).status_code == 403
    batch = [rpc(3, "ping"), rpc(4, "index/delete", {"ids": ["a"]})]
    assert client.post(live.url, json=batch, headers=reader).status_code == 403
    assert probe.writes == 0  # refused before dispatch
    assert "result" in client.post(f"{live.url}/index/add", json=add, headers=WRITER).json()
    assert probe.writes == 1


def test_credentials_load_from_the_environment_and_a_toml_file(tmp_path: Path) -> None:
    file = tmp_path / "tokens.toml"
    file.write_text(
        '[[token]]\nname = "ci"\ntoken_env = "CI_TOKEN"\ntenant = "acme"\nwrite = false\n'
        '[[token]]\nname = "admin"\ntoken = "admin-secret"\n'
    )
    environ = {"CI_TOKEN": "ci-secret", "RCPKIT_HTTP_TOKENS": "plain, scoped@globex"}
    credentials = Credentials.load(file, environ)
    assert credentials is not None
    by_token = {
        token: credentials.authenticate(f"Bearer {token}".encode(), None)
        for token in ("ci-secret", "admin-secret", "plain", "scoped")
    }
    assert by_token["ci-secret"] is not None and by_token["ci-secret"].tenant == "acme"
    assert not by_token["ci-secret"].write
    assert by_token["admin-secret"] is not None and by_token["admin-secret"].tenant is None
    assert by_token["scoped"] is not None and by_token["scoped"].tenant == "globex"
    assert credentials.authenticate(b"Bearer scoped@globex", None) is None
    assert Credentials.load(None, {}) is None


def test_tenant_scoped_credentials_need_an_engine_that_honours_tenants() -> None:
    scoped = Credentials([Credential.of("a", "t", tenant="acme")])
    with pytest.raises(ValueError, match=r"honours ctx\.tenant"):
        HttpConfig(credentials=scoped)
    assert HttpConfig(credentials=scoped, tenant_aware=True).credentials is scoped


def test_two_credentials_may_not_share_a_token() -> None:
    with pytest.raises(ValueError, match="repeats"):
        Credentials([Credential.of("a", "same"), Credential.of("b", "same")])


def test_a_second_authorization_header_is_refused_whichever_comes_last(
    serve: Serve, client: httpx.Client
) -> None:
    # Before: the last header won, so invalid-then-valid was let in (200).
    live = serve(probe_app(Probe()), HttpConfig(credentials=TOKENS))
    url = f"{live.url}/ping"
    for headers in (
        [("authorization", "Bearer nope"), ("authorization", "Bearer w-secret")],
        [("authorization", "Bearer w-secret"), ("authorization", "Bearer w-secret")],
        [("x-api-key", "nope"), ("x-api-key", "r-secret")],
        [("authorization", "Bearer w-secret"), ("x-api-key", "r-secret")],
    ):
        response = client.post(url, json=rpc(1, "ping"), headers=headers)
        assert response.status_code == 401, headers
        assert response.json()["error"]["code"] == -32012


def test_unknown_paths_and_verbs_are_answered_only_after_auth(
    serve: Serve, client: httpx.Client
) -> None:
    # Before: 404, 405 and OPTIONS answered an unauthenticated caller.
    live = serve(probe_app(Probe()), HttpConfig(credentials=TOKENS))
    for response in (
        client.post(f"{live.root}/elsewhere", json=rpc(1, "ping")),
        client.get(f"{live.url}/ping"),
        client.options(f"{live.url}/ping"),
    ):
        assert response.status_code == 401, response.request
        assert response.json()["error"]["code"] == -32012
    assert client.get(f"{live.url}/ping", headers=WRITER).status_code == 405
    assert client.options(f"{live.url}/ping", headers=WRITER).status_code == 204
    assert client.post(f"{live.root}/elsewhere", headers=WRITER, json={}).status_code == 404


@pytest.mark.parametrize(
    ("file_text", "tokens"),
    [('[[token]]\nname = "e"\ntoken = "t"\ntenant = ""\n', ""), ("", "secret@")],
)
def test_an_empty_tenant_name_is_refused_at_load(
    tmp_path: Path, file_text: str, tokens: str
) -> None:
    # Before: tenant "" (or `TOKEN@`) quietly shared the unscoped documents.
    file = tmp_path / "tokens.toml"
    file.write_text(file_text)
    with pytest.raises(ValueError, match="empty tenant"):
        Credentials.load(file if file_text else None, {"RCPKIT_HTTP_TOKENS": tokens})


def test_without_auth_the_server_is_read_only_and_advertises_no_write(
    serve: Serve, client: httpx.Client
) -> None:
    probe = Probe()
    live = serve(probe_app(probe), HttpConfig())
    info = client.post(f"{live.url}/info", json=rpc(1, "info")).json()["result"]
    assert info["capabilities"]["index"]["writable"] is False
    add = rpc(2, "index/add", {"documents": [{"text": "t"}]})
    delete = rpc(3, "index/delete", {"ids": ["a"]})
    for body in (add, delete):
        refused = client.post(f"{live.url}/{body['method']}", json=body)
        assert refused.status_code == 403
        assert refused.json()["error"]["code"] == -32012
    assert probe.writes == 0
    assert (
        "result"
        in client.post(f"{live.url}/retrieve", json=rpc(4, "retrieve", {"query": "q"})).json()
    )
    opened = serve(probe_app(Probe()), HttpConfig(unauthenticated_writes=True))
    assert "result" in client.post(f"{opened.url}/index/add", json=add).json()


def test_a_server_without_writes_is_served_as_it_is_without_auth() -> None:
    app = App("reader", "1")

    @app.retrieve(max_k=5, modes=["sparse"])
    def retrieve(params: Any) -> dict[str, Any]:
        return {"hits": []}

    assert HttpApp(app.server, HttpConfig()).server is app.server  # no read-only copy
    writer = probe_app(Probe())
    assert HttpApp(writer.server, HttpConfig()).server is not writer.server


def test_a_refused_write_echoes_the_request_id_and_a_refused_batch_every_id(
    serve: Serve, client: httpx.Client
) -> None:
    # §4.7: servers MUST echo the id, refusals included.
    probe = Probe()
    reader = {"authorization": "Bearer r-secret"}
    authed = serve(probe_app(probe), HttpConfig(credentials=TOKENS))
    anonymous = serve(probe_app(probe), HttpConfig())  # read-only without auth
    add = rpc("add-7", "index/add", {"documents": [{"text": "t"}]})
    for url, headers in ((authed.url, reader), (anonymous.url, {})):
        refused = client.post(f"{url}/index/add", json=add, headers=headers)
        assert refused.status_code == 403
        assert refused.json()["id"] == "add-7"
        assert refused.json()["error"]["code"] == -32012
        batch = [rpc(3, "ping"), rpc(4, "index/delete", {"ids": ["a"]})]
        answers = client.post(url, json=batch, headers=headers)
        assert answers.status_code == 403
        assert sorted(answer["id"] for answer in answers.json()) == [3, 4]
        assert {answer["error"]["code"] for answer in answers.json()} == {-32012}
    assert probe.writes == 0
