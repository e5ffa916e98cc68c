"""A deleted and re-created tenant never serves a version from before its deletion (issue 52).

`rcpkit tenants delete` dropped the tenant's version history, so a tenant of the
same name created again numbered its commits from 1 and a client's old pin
``"1"`` was answered with the new tenant's content. §7.7.1: a pinned version is
served exactly or refused with ``-32010``; a cursor of it is refused as expired
(``-32015``). The real server (the bundled model) and the real CLI.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from process_support import read_until, stop

TOKEN = "acme-token"


class Server:
    """``rcpkit serve --http`` on ``folder`` with a token scoped to tenant ``acme``."""

    def __init__(self, folder: Path, *options: str) -> None:
        command = [sys.executable, "-m", "rcpkit", "serve", "--http", "127.0.0.1:0"]
        command += ["--workers", "1", "--index", str(folder), *options]
        environment = {**os.environ, "RCPKIT_HTTP_TOKENS": f"{TOKEN}@acme"}
        environment.pop("RCPKIT_EMBEDDER", None)  # the bundled model
        self.process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=environment
        )
        match, _ = read_until(self.process, b"", rb"serving RCP over HTTP on (\S+)", timeout=300)
        self.url = match.group(1).decode()

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        headers = {"authorization": f"Bearer {TOKEN}"}
        answer: dict[str, Any] = httpx.post(
            self.url, json=body, headers=headers, timeout=120
        ).json()
        return answer

    def result(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        answer = self.call(method, params)
        assert "result" in answer, answer
        result: dict[str, Any] = answer["result"]
        return result

    def close(self) -> None:
        """SIGTERM, as an operator stops it before ``tenants delete``; drained, exit 0."""
        self.process.send_signal(signal.SIGTERM)
        assert self.process.wait(120) == 0
        stop(self.process)


def _add(server: Server, prefix: str, texts: list[str]) -> str:
    documents = [{"id": f"{prefix}{n}", "text": text} for n, text in enumerate(texts)]
    return str(server.result("index/add", {"documents": documents})["indexVersion"])


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest) -> list[str]:
    """The options naming the store: the embedded file, or a fresh PostgreSQL database."""
    if request.param == "sqlite":
        return []
    url: str = request.getfixturevalue("postgres_url")
    return ["--store", url]


def test_a_pin_and_a_cursor_from_before_a_tenant_deletion_are_refused_after_it_is_re_created(
    tmp_path: Path, store: list[str]
) -> None:
    folder = tmp_path / "idx"
    query = {"query": "rocket launch schedule", "k": 1}
    first = Server(folder, "--create", *store)
    try:
        old = _add(first, "old", ["rocket launch schedule for May", "rocket fuel order"])
        before = first.result("retrieve", {**query, "indexVersion": old})
        assert before["hits"][0]["id"].startswith("old")
        cursor = before["nextCursor"]
    finally:
        first.close()
    environment = {**os.environ}
    environment.pop("RCPKIT_EMBEDDER", None)
    command = [sys.executable, "-m", "rcpkit", "tenants", "delete", "acme"]
    deleted = subprocess.run(
        [*command, "--index", str(folder), *store],
        capture_output=True, text=True, timeout=300, env=environment, check=False,
    )  # fmt: skip
    assert deleted.returncode == 0, deleted.stderr
    again = Server(folder, *store)
    try:
        empty = again.result("retrieve", query)
        assert empty["hits"] == [] and empty["indexVersion"] not in (old, "0")
        new = _add(again, "new", ["rocket launch schedule for June", "rocket hangar lease"])
        assert int(new) > int(empty["indexVersion"])  # numbers only ever grow
        pinned = again.call("retrieve", {**query, "indexVersion": old})
        assert pinned["error"]["code"] == -32010, pinned  # §7.7.1: that snapshot, or -32010
        assert "new" not in str(pinned["error"])
        paged = again.call("retrieve", {**query, "indexVersion": old, "cursor": cursor})
        assert paged["error"]["code"] in (-32010, -32015), paged
        paged = again.call("retrieve", {**query, "cursor": cursor})
        assert paged["error"]["code"] == -32015, paged  # expired: restart pagination
        served = again.result("retrieve", {**query, "indexVersion": new})
        assert served["hits"][0]["id"].startswith("new")
    finally:
        again.close()
