"""docs/integrations.md's python snippets, run as written against real rcpkit servers.

Issue 52.12: the docs promised a shorthand that one integration refused with a
TypeError. The snippets run in order in one namespace, as a reader would paste
them into one session, with what the page assumes set up around them: an index
at ``./my-index`` (the working directory is a fresh folder), an ``rcp.json``
whose ``docs`` entry serves it, ``$RCP_TOKEN`` and an HTTP server behind that
token at the page's placeholder URL (the one substitution made in the text).
"""

from __future__ import annotations

import ast
import asyncio
import json
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain_core")
pytest.importorskip("llama_index.core")
pytest.importorskip("haystack")

from integrations_support import HASHING, http_server, populate, serve_args

from rcpkit.integrations import Connection

pytestmark = pytest.mark.timeout(300)

PAGE = Path(__file__).parents[2] / "docs" / "integrations.md"
PLACEHOLDER_URL = "https://search.example.com/rcp"
TOKEN = "docs-snippet-token"


def python_blocks(page: Path) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", page.read_text(), flags=re.M | re.S)


@pytest.fixture
def page_setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """What the page assumes; yields the URL of the server behind ``$RCP_TOKEN``."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RCP_TOKEN", TOKEN)
    monkeypatch.setenv("RCPKIT_EMBEDDER", HASHING)  # the spawned servers' embedder
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    monkeypatch.setenv("PATH", path)  # the page spawns `rcpkit` by name
    with Connection.stdio(serve_args(tmp_path / "my-index")) as connection:
        populate(connection)
    entry = {
        "id": "docs",
        "transport": "stdio",
        "command": ["rcpkit", "serve", "--index", str(tmp_path / "my-index")],
        "passEnv": ["PYTHONPATH"],
    }
    (tmp_path / "rcp.json").write_text(json.dumps({"engines": [entry]}))
    with http_server(tmp_path / "http-index", tokens=TOKEN) as url:
        with Connection.http(url, token=TOKEN) as connection:
            populate(connection)
        yield url


def run_block(source: str, namespace: dict[str, Any]) -> list[Any]:
    """Run one snippet (top-level ``await`` allowed); return its bare expressions' values."""
    tree = ast.parse(source)
    for number, statement in enumerate(tree.body):
        if isinstance(statement, ast.Expr):  # keep what a REPL would show
            target = ast.Name(id=f"_shown_{number}", ctx=ast.Store())
            tree.body[number] = ast.Assign(targets=[target], value=statement.value)
    ast.fix_missing_locations(tree)
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    code = compile(tree, "<docs/integrations.md>", "exec", flags=flags)
    result = eval(code, namespace)  # the project's own docs
    if asyncio.iscoroutine(result):
        asyncio.run(result)
    shown = sorted(name for name in namespace if name.startswith("_shown_"))
    return [namespace.pop(name) for name in shown]


def nothing_empty(value: Any) -> bool:
    """A list or dict result holds something, all the way down (a refusal is no empty list)."""
    if isinstance(value, list | dict):
        inner = value.values() if isinstance(value, dict) else value
        return bool(value) and all(nothing_empty(item) for item in inner)
    return True


def test_every_python_snippet_of_the_integrations_page_runs_against_real_servers(
    page_setup: str,
) -> None:
    blocks = python_blocks(PAGE)
    # connections, shorthand, in process, LangChain (retriever, vector store), LlamaIndex,
    # Haystack
    assert len(blocks) == 7
    namespace: dict[str, Any] = {}
    try:
        for block in blocks:
            shown = run_block(block.replace(PLACEHOLDER_URL, page_setup), namespace)
            assert all(nothing_empty(value) for value in shown), shown
        assert namespace["docs"] and namespace["nodes"]
        assert len(namespace["refunds"]) == 2 and len(namespace["nearest"]) == 1
        connections = [value for value in namespace.values() if isinstance(value, Connection)]
        assert len(connections) == 3
        for connection in connections:  # each of the page's three ways reaches its server
            assert "retrieve" in connection.capabilities
    finally:
        for value in list(namespace.values()):
            if isinstance(value, Connection):
                value.close()
