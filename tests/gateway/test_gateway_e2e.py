"""``python -m rcpkit gateway`` as a real process in front of real ``rcpkit serve`` engines."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from gateway_support import GATEWAY, KEYWORD, announced_http, build_index, write_registry

from rcpkit.client import Client
from rcpkit.protocol import RCPError


@pytest.fixture(scope="module")
def persistent(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    return build_index(tmp_path_factory.mktemp("notes"))


def _two_engines(tmp_path: Path, persistent: list[str]) -> Path:
    return write_registry(
        tmp_path / "rcp.json",
        [
            {"id": "samples", "transport": "stdio", "command": [*KEYWORD, "--sample"]},
            {"id": "notes", "transport": "stdio", "command": persistent},
        ],
    )


async def test_two_real_engines_over_different_corpora_behind_the_gateway(
    tmp_path: Path, persistent: list[str]
) -> None:
    path = _two_engines(tmp_path, persistent)
    async with await Client.connect_stdio([*GATEWAY, str(path)], connect_timeout=60) as client:
        assert client.supports("catalog") and client.supports("retrieve")
        assert set(client.raw_capabilities["retrieve"]["modes"]) == {"dense", "sparse", "hybrid"}
        listed = await client.catalog_list()
        assert {(e.id, e.server.name) for e in listed.engines} == {
            ("samples", "rcpkit-keyword"),
            ("notes", "rcpkit"),
        }
        assert listed.engines[0].endpoint is not None
        result = await client.retrieve("reciprocal rank fusion", k=4, mode="sparse")
        by_engine = {hit.meta["engine"]: str(hit.id) for hit in result.hits}
        assert by_engine["samples"] == "hybrid-fusion"
        assert by_engine["notes"].startswith("fusion-notes.md")


async def test_a_registry_listing_its_own_gateway_terminates_and_notes_the_cycle(
    tmp_path: Path,
) -> None:
    path = tmp_path / "rcp.json"
    write_registry(
        path,
        [
            {"id": "samples", "transport": "stdio", "command": [*KEYWORD, "--sample"]},
            {"id": "self", "transport": "stdio", "command": [*GATEWAY, str(path)]},
        ],
    )
    async with await Client.connect_stdio([*GATEWAY, str(path)], connect_timeout=60) as client:
        raw = await client.call("retrieve", {"query": "bm25", "k": 2})
        listed = await client.catalog_list()
    assert raw["_meta"]["federation"]["answered"] == ["samples"]
    assert any("engine 'self' skipped: federation cycle" in note for note in raw["usage"]["notes"])
    assert {entry.id for entry in listed.engines} == {"samples", "self"}


def test_a_required_engine_down_at_start_stops_the_gateway(tmp_path: Path) -> None:
    path = write_registry(
        tmp_path / "rcp.json",
        [
            {"id": "samples", "transport": "stdio", "command": [*KEYWORD, "--sample"]},
            {
                "id": "core",
                "transport": "stdio",
                "command": ["/nonexistent/engine"],
                "required": True,
            },
        ],
    )
    done = subprocess.run(
        [*GATEWAY, str(path)], stdin=subprocess.DEVNULL, capture_output=True, timeout=30
    )
    assert done.returncode == 1
    assert b"required engine 'core' is unavailable" in done.stderr


def test_a_bad_registry_is_a_usage_error(tmp_path: Path) -> None:
    path = tmp_path / "rcp.json"
    path.write_text('{"engines": [{"id": "x"}]}')
    done = subprocess.run(
        [*GATEWAY, str(path)], stdin=subprocess.DEVNULL, capture_output=True, timeout=30
    )
    assert done.returncode == 2 and b"engines[0]" in done.stderr


async def test_the_gateway_over_http_applies_bearer_auth(
    tmp_path: Path, persistent: list[str]
) -> None:
    path = _two_engines(tmp_path, persistent)
    token = "gateway-test-token"
    command = [*GATEWAY, str(path), "--http", "127.0.0.1:0"]
    with announced_http(command, {"RCPKIT_HTTP_TOKENS": token}) as (url, _):
        with pytest.raises(RCPError) as refused:
            await Client.connect_http(url, connect_timeout=60)
        assert refused.value.code == -32012
        client = await Client.connect_http(url, token=token)
        async with client, client.stream_retrieve("reciprocal rank fusion", k=3) as call:
            events = [event async for event in call]
            result = await call.result()
        assert len(events) == 2  # one per engine, over SSE
        assert {hit.meta["engine"] for hit in result.hits} == {"samples", "notes"}
