"""Federation keeps relevance (issue 16): a real gateway over real engine processes.

The user's report: four engines federated; for "Paris landmark iron tower"
RRF put an unrelated engine's "The View from the Tower of Babel" first and
the exact Eiffel Tower hit never showed. RRF gives every engine's first hit
the same 1/(k+1), so the order among them is the id tie-break (§16.3), not
relevance. The gateway's default fusion is calibrated (§16.3 score-aware,
per-engine calibration): rcpkit engines' ``confidence``, the foreign engine's
scores calibrated by the gateway.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from gateway_support import GATEWAY, PYTHON, write_registry

from rcpkit.client import Client
from rcpkit.protocol import messages as m
from rcpkit.protocol.content import Hit

FOREIGN = [PYTHON, str(Path(__file__).with_name("foreign_engine.py"))]
EMBEDDER = ["--embedder", "hashing:4096"]

CORPORA = {
    "landmarks": {
        "eiffel-tower.md": "# Eiffel Tower\n\nThe Eiffel Tower is a wrought iron lattice tower "
        "in Paris, the landmark of France on the Champ de Mars.\n",
        "big-ben.md": "# Big Ben\n\nThe great clock bell of the Palace of Westminster in "
        "London, rung every hour since 1859.\n",
        "colosseum.md": "# Colosseum\n\nAn oval amphitheatre of concrete and stone in the "
        "centre of Rome, built under the Flavian emperors.\n",
    },
    "books": {
        "babel.md": "# The View from the Tower of Babel\n\nA novel of exile, memory and "
        "the languages a family lost on its way.\n",
        "moby-dick.md": "# Moby-Dick\n\nCaptain Ahab's hunt for the white whale that took "
        "his leg, told by the sailor Ishmael.\n",
        "emma.md": "# Emma\n\nA young woman in a country village who meddles in the "
        "marriages of her friends.\n",
    },
    "recipes": {
        "apple-pie.md": "# Apple pie\n\nSliced apples with sugar and cinnamon baked in a "
        "butter crust until golden.\n",
        "bread.md": "# Bread\n\nFlour, water, yeast and salt kneaded, proved and baked in a "
        "hot oven.\n",
        "risotto.md": "# Risotto\n\nArborio rice stirred with stock, onion and parmesan "
        "until creamy.\n",
    },
}
QUERY = "Paris landmark iron tower"
# Spawned processes run this checkout's rcpkit (§15.1: nothing is inherited unless named).
SPAWN: dict[str, Any] = {"pass_env": ("PYTHONPATH",), "connect_timeout": 60}


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("four-engines")
    engines = []
    for name, files in CORPORA.items():
        documents = root / name / "docs"
        documents.mkdir(parents=True)
        for file, text in files.items():
            (documents / file).write_text(text)
        index = ["--index", str(root / name / "index"), *EMBEDDER]
        subprocess.run(
            [PYTHON, "-m", "rcpkit", "index", str(documents), *index],
            check=True,
            capture_output=True,
            timeout=120,
        )
        command = [PYTHON, "-m", "rcpkit", "serve", "--stdio", *index]
        engines.append(
            {"id": name, "transport": "stdio", "command": command, "passEnv": ["PYTHONPATH"]}
        )
    engines.append({"id": "astro", "transport": "stdio", "command": FOREIGN})
    return write_registry(root / "rcp.json", engines)


def _documents(hits: Sequence[Hit]) -> list[str]:
    return [str(hit.id).partition("#")[0] for hit in hits]


async def test_the_exact_hit_comes_first_and_unrelated_engines_stay_out(registry: Path) -> None:
    async with await Client.connect_stdio([*GATEWAY, str(registry)], **SPAWN) as gw:
        result = await gw.retrieve(QUERY, k=3)
    documents = _documents(result.hits)
    assert documents[0] == "eiffel-tower.md", documents
    engines = [hit.meta["engine"] for hit in result.hits if hit.meta]
    # Neither the recipes engine nor the foreign astronomy engine has anything on towers.
    assert "recipes" not in engines and "astro" not in engines, documents
    assert result.hits[0].confidence is not None
    assert all(hit.confidence is not None for hit in result.hits)  # the foreign ones estimated


async def test_rrf_on_request_still_interleaves_engines_by_rank(registry: Path) -> None:
    # RRF stays available (§16.3): every engine's first hit ties at 1/(60+1), broken by
    # the smaller id - the reported failure, on request only.
    async with await Client.connect_stdio([*GATEWAY, str(registry)], **SPAWN) as gw:
        result = await gw.retrieve(QUERY, k=3, fusion=m.Fusion(method="rrf"))
    documents = _documents(result.hits)
    assert "eiffel-tower.md" not in documents, documents
    assert len({hit.meta["engine"] for hit in result.hits if hit.meta}) == 3
