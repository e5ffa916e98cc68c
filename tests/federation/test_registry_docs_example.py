"""docs/gateway.md's ``rcp.json`` example, read by the code that reads every registry.

The example is parsed out of the page, so it cannot drift from what
``load_registry`` accepts: each key it shows must land in the field it names.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

from rcpkit.client.http import HttpEndpoint
from rcpkit.client.stdio import StdioEndpoint
from rcpkit.federation.registry import EngineSpec, load_registry

PAGE = Path(__file__).resolve().parents[2] / "docs" / "gateway.md"


def _example() -> str:
    section = PAGE.read_text(encoding="utf-8").split("## The registry: `rcp.json`", 1)[1]
    blocks = re.findall(r"```json\n(.*?)```", section, re.DOTALL)
    assert blocks, "docs/gateway.md: the registry section has no ```json example"
    return str(blocks[0])


def _key_of(field: str) -> str:
    head, *rest = field.split("_")
    return head + "".join(part.title() for part in rest)  # pass_env → passEnv (the wire's case)


def _as_read(key: str, value: Any, folder: Path) -> Any:
    """The example's value the way EngineSpec holds it."""
    if key in ("command", "passEnv"):
        return tuple(value)
    if key == "cwd":
        return folder / value
    if key in ("weight", "timeout"):
        return float(value)
    return value


def test_the_registry_example_in_the_docs_loads_with_every_key_read(tmp_path: Path) -> None:
    text = _example()
    path = tmp_path / "rcp.json"
    path.write_text(text, encoding="utf-8")
    registry = load_registry(path)
    document = json.loads(text)
    assert [engine.id for engine in registry.engines] == [e["id"] for e in document["engines"]]
    keys = {_key_of(field.name): field.name for field in dataclasses.fields(EngineSpec)}
    shown: set[str] = set()
    for entry, engine in zip(document["engines"], registry.engines, strict=True):
        for key, value in entry.items():
            # An unknown key is ignored by the reader, so a misspelt one would pass unseen.
            assert key in keys, f"docs/gateway.md: {entry['id']}.{key} is not a registry key"
            assert getattr(engine, keys[key]) == _as_read(key, value, tmp_path), (entry["id"], key)
            shown.add(key)
    # The example is complete: it shows every key an engine entry can have.
    assert shown == set(keys)
    # And each entry is reachable the way its transport says.
    for engine in registry.engines:
        endpoint = engine.endpoint(environ={"WIKI_RCP_TOKEN": "t"})
        expected = StdioEndpoint if engine.transport == "stdio" else HttpEndpoint
        assert isinstance(endpoint, expected)
    wiki = registry.get("wiki")
    assert wiki is not None
    reached = wiki.endpoint(environ={"WIKI_RCP_TOKEN": "t"})
    assert isinstance(reached, HttpEndpoint) and reached.token == "t"


def test_every_registry_key_of_the_example_is_in_the_docs_key_table() -> None:
    table = PAGE.read_text(encoding="utf-8").split("## The registry: `rcp.json`", 1)[1]
    documented = set(re.findall(r"^\| `(\w+)` \|", table, re.MULTILINE))
    keys = {_key_of(field.name) for field in dataclasses.fields(EngineSpec)}
    assert documented == keys
