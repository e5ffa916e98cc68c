"""``App.run_http()`` beside ``run_stdio()``: the same app, served over HTTP."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

from rcpkit.client import Client

sys.path.append(str(Path(__file__).parent.parent / "client"))
from client_support import announced_http

SERVER = textwrap.dedent(
    """
    from rcpkit import App

    app = App("over-http", "1.0")


    @app.retrieve()
    def search(query: str, k: int = 2):
        return [(f"{query}-{i}", 1.0 - i / 10) for i in range(5)]


    app.run_http(0)
    """
)


async def test_an_app_serves_http_with_run_http(tmp_path: Path) -> None:
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    env = {"PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    with announced_http([sys.executable, str(script)], env=env) as (url, _):
        async with await Client.connect_http(url) as client:
            result = await client.retrieve("q")
    assert client.server.name == "over-http"
    assert [hit.id for hit in result.hits] == ["q-0", "q-1"]
