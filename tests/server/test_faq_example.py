"""The docs' FAQ server (docs/sdk.md): no longer than its MCP SDK twin, and answering the same."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from rcpkit.client import Client

ROOT = Path(__file__).resolve().parents[2]
RCPKIT_FAQ = ROOT / "examples" / "faq_rcpkit.py"
MCP_FAQ = ROOT / "examples" / "faq_mcp.py"
QUERIES: list[dict[str, Any]] = [
    {"query": "how do refunds work after a return"},
    {"query": "the item arrives within days", "k": 2},
    {"query": "nothing matches this"},
]


def test_the_sdk_page_shows_both_servers_verbatim() -> None:
    readme = (ROOT / "docs" / "sdk.md").read_text()
    for example in (RCPKIT_FAQ, MCP_FAQ):
        assert f"```python\n{example.read_text()}```" in readme


def test_the_rcpkit_faq_server_is_no_longer_than_the_mcp_one() -> None:
    def lines(path: Path) -> int:
        return len(path.read_text().splitlines())

    assert lines(RCPKIT_FAQ) <= lines(MCP_FAQ)
    readme = (ROOT / "docs" / "sdk.md").read_text()
    assert f"{lines(RCPKIT_FAQ)} lines against {lines(MCP_FAQ)}" in readme


async def _rcpkit_answers() -> list[list[tuple[Any, float, str | None]]]:
    command = [sys.executable, str(RCPKIT_FAQ)]
    async with await Client.connect_stdio(
        command, pass_env=["PYTHONPATH"], connect_timeout=60
    ) as client:
        results = [await client.call("retrieve", query) for query in QUERIES]
    return [[(h["id"], h["score"], h.get("text")) for h in r["hits"]] for r in results]


async def _mcp_answers() -> list[list[tuple[Any, float, str | None]]]:
    pytest.importorskip("mcp")
    from mcp import Client as McpClient
    from mcp import StdioServerParameters

    answers = []
    env = {"PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    server = StdioServerParameters(command=sys.executable, args=[str(MCP_FAQ)], env=env)
    async with McpClient(server) as client:
        for query in QUERIES:
            result = await client.call_tool("search", query)
            hits = result.structured_content["result"]
            answers.append([(h["id"], float(h["score"]), h["text"]) for h in hits])
    return answers


async def test_both_faq_servers_answer_the_same() -> None:
    rcpkit_answers = await _rcpkit_answers()
    assert rcpkit_answers == await _mcp_answers()
    assert [hit[0] for hit in rcpkit_answers[0]][:1] == ["refunds"]
    assert len(rcpkit_answers[1]) <= 2 and rcpkit_answers[2] == []
    assert json.dumps(rcpkit_answers)  # plain JSON all the way
