"""The client's ``retrieve`` takes typed keywords, one declaration for async, streamed and sync."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import msgspec
import pytest

from rcpkit.client import Client, SyncClient
from rcpkit.protocol import messages as m

CALL_OPTIONS = {"timeout", "options", "on_progress"}


def _keywords(method: object) -> set[str]:
    return {
        name
        for name, parameter in inspect.signature(method).parameters.items()  # type: ignore[arg-type]
        if parameter.kind is parameter.KEYWORD_ONLY
    }


def test_every_retrieve_field_is_a_keyword_of_every_surface() -> None:
    fields = {field.name for field in msgspec.structs.fields(m.RetrieveParams)} - {"query"}
    for method in (Client.retrieve, Client.stream_retrieve, SyncClient.retrieve):
        assert _keywords(method) == fields | CALL_OPTIONS, method


def test_every_graph_field_is_a_keyword_and_op_comes_first() -> None:
    fields = {field.name for field in msgspec.structs.fields(m.GraphParams)} - {"op"}
    for method in (Client.graph, SyncClient.graph):
        assert _keywords(method) == fields | CALL_OPTIONS, method
        assert list(inspect.signature(method).parameters)[:2] == ["self", "op"]


async def test_a_bound_method_shows_the_declared_signature() -> None:
    shown = inspect.signature(Client.retrieve.__get__(object.__new__(Client)))
    assert list(shown.parameters)[:2] == ["query", "k"]


def test_mypy_catches_a_misspelt_mode_on_the_async_and_the_sync_client(tmp_path: Path) -> None:
    pytest.importorskip("mypy")
    probe = tmp_path / "probe.py"
    probe.write_text(
        textwrap.dedent(
            """
            from rcpkit.client import Client, SyncClient

            async def use(client: Client, sync: SyncClient) -> None:
                await client.retrieve("q", k=3, mode="hybrid", token_budget=200)
                await client.retrieve("q", mode="hybird")
                sync.retrieve("q", mode="hybird")
                sync.retrieve("q", rewrite="hyde", filter={"field": "t", "op": "eq", "value": 1})
            """
        )
    )
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(probe)],
        capture_output=True,
        text=True,
        timeout=170,
        env={**os.environ, "MYPYPATH": str(Path(__file__).resolve().parents[2] / "src")},
    )
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert [line.split(":")[1] for line in errors] == ["6", "7"], done.stdout
    assert all("hybird" in line and "mode" in line for line in errors)


test_mypy_catches_a_misspelt_mode_on_the_async_and_the_sync_client = pytest.mark.timeout(180)(
    test_mypy_catches_a_misspelt_mode_on_the_async_and_the_sync_client
)
