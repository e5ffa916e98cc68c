"""Several processes writing one embedded index (issue 14): one version sequence, every arm."""

from __future__ import annotations

from pathlib import Path

import pytest
from engine_support import Calls, make_engine, serving

pytestmark = pytest.mark.asyncio


def hit_ids(result: dict[str, object]) -> list[str]:
    return [hit["id"] for hit in result["hits"]]  # type: ignore[attr-defined, index]


async def test_a_server_sees_another_processs_commits_on_every_arm_with_pinned_versions_exact(
    tmp_path: Path,
) -> None:
    # The server and an outside `rcpkit index` each open the folder: own connections,
    # own in-memory mirror, as two processes do.
    server, indexer = make_engine(tmp_path), make_engine(tmp_path)
    async with serving(server) as peer:
        call = Calls(peer)
        first = await call.result(
            "index/add", {"documents": [{"id": "old", "text": "lighthouse keeper"}]}
        )
        async with serving(indexer) as outside:
            await Calls(outside).result(
                "index/add", {"documents": [{"id": "new", "text": "lighthouse keeper"}]}
            )
            await Calls(outside).result("index/delete", {"ids": ["old"]})
        for mode in ("dense", "sparse", "hybrid"):
            latest = await call.result("retrieve", {"query": "lighthouse", "k": 5, "mode": mode})
            assert latest["indexVersion"] == "3"
            assert hit_ids(latest) == ["new#0"], mode
            pinned = await call.result(
                "retrieve",
                {"query": "lighthouse", "k": 5, "mode": mode,
                 "indexVersion": first["indexVersion"]},
            )  # fmt: skip
            assert hit_ids(pinned) == ["old#0"], mode
        # The server's own next write takes the next version, not one already used.
        again = await call.result("index/add", {"documents": [{"id": "x", "text": "other"}]})
        assert again["indexVersion"] == "4"
    server.close()
    indexer.close()
