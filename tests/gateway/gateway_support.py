"""Helpers for the gateway tests (reusing the client and federation test helpers)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

for _sibling in ("client", "federation"):
    _folder = str(Path(__file__).parent.parent / _sibling)
    if _folder not in sys.path:
        sys.path.append(_folder)

from client_support import PYTHON, announced_http  # noqa: E402
from federation_support import KEYWORD, Engine, connector, registry  # noqa: E402

__all__ = [
    "GATEWAY",
    "KEYWORD",
    "PYTHON",
    "Engine",
    "announced_http",
    "build_index",
    "connector",
    "registry",
    "write_registry",
]

# The gateway's timers only catch a hang here: a real `rcpkit serve` took 10-11 s to
# start under load 17 on 2 cores (issue 52), past the 10 s connect and engine
# defaults, and an engine slower than --slow-engine (2 s) twice is demoted to a
# 0.25 s timeout. A test of a timer names its own value after these (the last wins).
PATIENT = ["--connect-timeout", "60", "--engine-timeout", "60", "--slow-engine", "60"]
GATEWAY = [PYTHON, "-m", "rcpkit", "gateway", *PATIENT]

NOTES = {
    "fusion-notes.md": "# Fusion notes\n\nReciprocal rank fusion merges the rankings of many "
    "engines into one list; its constant k is sixty.\n",
    "fruit.md": "# Fruit\n\nApples and bananas are fruit grown in orchards and plantations.\n",
}


def build_index(folder: Path) -> list[str]:
    """Index NOTES into ``folder``; the persistent-engine serve command over it."""
    documents = folder / "docs"
    documents.mkdir(parents=True)
    for name, text in NOTES.items():
        (documents / name).write_text(text)
    index = folder / "index"
    config = folder / "rcpkit.toml"  # MaxSim rerank is opt-in; the gateway routes rerank here
    config.write_text("[engine]\ncolbert_rerank = true\n")
    embedder = ["--index", str(index), "--embedder", "hashing:64", "--config", str(config)]
    subprocess.run(
        [PYTHON, "-m", "rcpkit", "index", str(documents), *embedder],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return [PYTHON, "-m", "rcpkit", "serve", "--stdio", *embedder]


def write_registry(path: Path, engines: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps({"engines": engines}))
    return path
