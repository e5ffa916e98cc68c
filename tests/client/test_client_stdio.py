"""The client against real ``rcpkit serve`` subprocesses over stdio."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess

import pytest
from client_support import KEYWORD, PYTHON

from rcpkit.client import (
    CapabilityMissing,
    Client,
    OptionUnsupported,
    StdioChannel,
    StdioEndpoint,
    TransportClosed,
)
from rcpkit.client.stdio import child_environment


async def test_a_full_typed_session_with_the_keyword_engine() -> None:
    async with await Client.connect_stdio([*KEYWORD, "--sample"], connect_timeout=60) as client:
        assert client.server.name == "rcpkit-keyword"
        assert (await client.ping("n")).nonce == "n"
        info = await client.info()
        assert info.capabilities.retrieve is not None
        result = await client.retrieve("learned sparse SPLADE", k=2)
        assert result.hits[0].id == "learned-sparse"
        assert result.hits[0].citation is not None
        assert len(result.hits) <= 2


# ``rcpkit serve`` started 12 s late: a server importing its model stack took 10-11 s
# to answer initialize on a loaded machine (issue 52), past the old 10 s default.
LATE = "import runpy, time; time.sleep(12); runpy.run_module('rcpkit', run_name='__main__')"


async def test_the_default_connect_waits_for_a_server_slower_to_start_than_ten_seconds() -> None:
    command = [PYTHON, "-c", LATE, *KEYWORD[3:]]
    async with await Client.connect_stdio(command, pass_env=("PYTHONPATH",)) as client:
        assert client.server.name == "rcpkit-keyword"


async def test_gating_refuses_what_the_keyword_engine_does_not_advertise() -> None:
    async with await Client.connect_stdio(KEYWORD, connect_timeout=60) as client:
        with pytest.raises(CapabilityMissing):
            await client.embed(["x"])
        with pytest.raises(OptionUnsupported):
            await client.retrieve("x", mode="dense")
        assert client.connection.in_flight == 0


async def test_index_writes_then_retrieve_then_delete() -> None:
    async with await Client.connect_stdio(KEYWORD, connect_timeout=60) as client:
        added = await client.index_add(
            [{"id": "n1", "text": "pelicans fly over the harbour"}, {"id": "n2", "text": "gulls"}]
        )
        assert added.ids == ["n1", "n2"]
        assert (await client.retrieve("pelicans", k=3)).hits[0].id == "n1"
        assert (await client.index_delete(["n1", "gone"])).deleted == 1


async def test_many_pipelined_calls_are_each_answered_with_their_own_result() -> None:
    async with await Client.connect_stdio([*KEYWORD, "--sample"], connect_timeout=60) as client:
        queries = ["bm25", "chunking", "reranking", "prompt injection"] * 5
        results = await asyncio.gather(*(client.retrieve(q, k=1) for q in queries))
        expected = {"bm25": "bm25", "chunking": "chunking", "reranking": "reranking"}
        for query, result in zip(queries, results, strict=True):
            if query in expected:
                assert result.hits[0].id == expected[query]


async def test_streaming_progress_from_a_real_server() -> None:
    async with await Client.connect_stdio([*KEYWORD, "--sample"], connect_timeout=60) as client:
        async with client.stream_retrieve("bm25", k=2) as call:
            stages = [getattr(event, "stage", None) async for event in call]
            result = await call.result()
        assert stages == ["recall", "pack"]
        assert result.hits[0].id == "bm25"


async def test_a_killed_server_fails_the_next_call_with_transport_closed() -> None:
    channel = StdioChannel(StdioEndpoint([*KEYWORD, "--sample"]))
    client = await Client.connect(channel, connect_timeout=60)
    assert channel.pid is not None
    os.kill(channel.pid, signal.SIGKILL)
    reason = await asyncio.wait_for(client.connection.wait_lost(), 30)
    assert "exited with code -9" in reason
    with pytest.raises(TransportClosed) as caught:
        await client.ping(timeout=2)
    assert "-9" in str(caught.value)
    await client.close()


async def test_a_spawned_server_gets_a_least_privilege_environment(tmp_path) -> None:
    script = tmp_path / "env_server.py"
    script.write_text(
        "import json, os, sys\n"
        "for line in sys.stdin:\n"
        "    request = json.loads(line)\n"
        "    result = {'protocolVersion': 1, 'server': {'name': 'env', 'version': '1'},\n"
        "              'capabilities': {'x-env': dict(os.environ)}, 'cwd': os.getcwd()}\n"
        "    print(json.dumps({'jsonrpc': '2.0', 'id': request['id'], 'result': result}),\n"
        "          flush=True)\n"
        "    break\n"
    )
    os.environ["RCPKIT_TEST_SECRET"] = "do-not-leak"
    os.environ["RCPKIT_TOKEN"] = "a-client-credential"
    os.environ["RCPKIT_SPARSE"] = "from-the-caller"
    try:
        client = await Client.connect_stdio(
            [PYTHON, str(script)],
            cwd=tmp_path,
            env={"GIVEN": "yes", "RCPKIT_SPARSE": "overridden"},
            pass_env=["LANG"],
        )
        bare = child_environment(StdioEndpoint(["x"]))
    finally:
        for name in ("RCPKIT_TEST_SECRET", "RCPKIT_TOKEN", "RCPKIT_SPARSE"):
            del os.environ[name]
    seen = client.raw_capabilities["x-env"]
    assert "RCPKIT_TEST_SECRET" not in seen and "RCPKIT_TOKEN" not in seen
    assert seen["GIVEN"] == "yes"
    assert seen["RCPKIT_SPARSE"] == "overridden"  # env= wins over an inherited setting
    await client.close()
    assert "RCPKIT_TEST_SECRET" not in bare and "RCPKIT_TOKEN" not in bare
    assert bare["RCPKIT_SPARSE"] == "from-the-caller"


@pytest.fixture
def pelican_index(tmp_path) -> str:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "pelicans.md").write_text("# Pelicans\n\nPelicans fly over the harbour.\n")
    index = str(tmp_path / "index")
    subprocess.run(
        [PYTHON, "-m", "rcpkit", "index", str(tmp_path / "docs")],
        env={**os.environ, "RCPKIT_INDEX": index, "RCPKIT_EMBEDDER": "hashing:64"},
        check=True,
        capture_output=True,
        timeout=120,
    )
    return index


async def test_a_spawned_rcpkit_serve_opens_the_index_rcpkit_index_names(
    pelican_index: str, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The README's snippet, `connect_stdio(["rcpkit", "serve"])`, with the index exported.
    index, embedder = pelican_index, "hashing:64"
    monkeypatch.setenv("RCPKIT_INDEX", index)
    monkeypatch.setenv("RCPKIT_EMBEDDER", embedder)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "no-default-index-here"))
    command = [PYTHON, "-m", "rcpkit", "serve", "--stdio"]
    async with await Client.connect_stdio(command, connect_timeout=60) as client:
        result = await client.retrieve("pelicans harbour", k=1, mode="sparse", timeout=30)
    assert [hit.id for hit in result.hits] == ["pelicans.md#0"]


async def test_a_server_that_exits_at_start_fails_the_connect_with_its_stderr(tmp_path) -> None:
    missing = tmp_path / "no-index"
    command = [PYTHON, "-m", "rcpkit", "serve", "--stdio", "--index", str(missing)]
    with pytest.raises(TransportClosed) as caught:
        await Client.connect_stdio(command, connect_timeout=60)
    message = str(caught.value)
    assert "exited with code 2" in message
    assert f"no index at {missing}" in message  # the server's own words, from its stderr
