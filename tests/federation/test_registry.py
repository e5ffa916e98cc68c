"""The §16.1 registry: rcp.json and an [rcp] table, defaults, and precise errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rcpkit.client import HttpEndpoint, StdioEndpoint
from rcpkit.federation import RegistryError, load_registry, parse_registry

SAMPLE = Path("/work/shared/reference/rcp.json.sample")


def test_the_reference_sample_registry_loads_with_its_fields(tmp_path: Path) -> None:
    path = tmp_path / "rcp.json"
    path.write_text(SAMPLE.read_text() if SAMPLE.exists() else json.dumps(_sample()))
    registry = load_registry(path)
    docs, web = registry.engines
    assert (docs.id, docs.transport, docs.priority, docs.weight) == ("docs", "stdio", 10, 1.0)
    assert docs.cwd == tmp_path  # relative commands run next to the registry
    assert (web.url, web.weight, web.required) == ("http://127.0.0.1:8000/rcp", 1.5, False)
    assert [engine.id for engine in registry.by_priority()] == ["docs", "web"]


def _sample() -> dict[str, object]:
    return {
        "engines": [
            {"id": "docs", "transport": "stdio", "command": ["python3", "s.py"], "priority": 10},
            {
                "id": "web",
                "transport": "http",
                "url": "http://127.0.0.1:8000/rcp",
                "priority": 5,
                "weight": 1.5,
            },
        ]
    }


def test_defaults_follow_the_spec() -> None:
    (engine,) = parse_registry(
        {"engines": [{"id": "x", "transport": "stdio", "command": ["s"]}]}
    ).engines
    assert (engine.priority, engine.weight, engine.required) == (0, 1.0, False)


def test_an_rcp_table_in_toml_is_a_registry(tmp_path: Path) -> None:
    path = tmp_path / "host.toml"
    path.write_text('[[rcp.engines]]\nid = "t"\ntransport = "http"\nurl = "https://e/rcp"\n')
    assert load_registry(path).engines[0].url == "https://e/rcp"


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({}, "`engines` array"),
        ({"engines": [{"transport": "stdio", "command": ["s"]}]}, r"engines\[0\]\.id"),
        ({"engines": [{"id": "a", "transport": "pipe"}]}, r"engines\[0\]\.transport"),
        ({"engines": [{"id": "a", "transport": "stdio"}]}, r"engines\[0\]\.command"),
        ({"engines": [{"id": "a", "transport": "http", "url": "ftp://x"}]}, r"\.url"),
        (
            {"engines": [{"id": "a", "transport": "stdio", "command": ["s"], "weight": -1}]},
            "weight",
        ),
        (
            {"engines": [{"id": "a", "transport": "stdio", "command": ["s"]}] * 2},
            "duplicate id 'a'",
        ),
    ],
)
def test_an_invalid_registry_is_refused_naming_the_entry(document: object, message: str) -> None:
    with pytest.raises(RegistryError, match=message):
        parse_registry(document)


def test_endpoints_carry_env_and_tokens_from_the_environment_only() -> None:
    registry = parse_registry(
        {
            "engines": [
                {"id": "s", "transport": "stdio", "command": ["srv"], "env": {"MODE": "x"}},
                {"id": "h", "transport": "http", "url": "http://h/rcp", "tokenEnv": "H_TOKEN"},
            ]
        }
    )
    stdio, http = registry.engines
    endpoint = stdio.endpoint(extra_env={"EXTRA": "1"})
    assert isinstance(endpoint, StdioEndpoint) and endpoint.env == {"MODE": "x", "EXTRA": "1"}
    remote = http.endpoint(environ={"H_TOKEN": "t0k"})
    assert isinstance(remote, HttpEndpoint) and remote.token == "t0k"
    assert http.public_endpoint() == {"transport": "http", "url": "http://h/rcp"}
    assert "env" not in stdio.public_endpoint()
