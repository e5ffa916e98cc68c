"""Helpers of the console's browser tests: the corpus, the CLI as a child, a free port."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

from process_support import read_until, stop

SAMPLES = Path(__file__).parents[2] / "src" / "rcpkit" / "samples"
# Four notes beside the bundled samples, in a folder of their own: a filter on
# `folders` selects them, and "fusion" finds some in both folders.
NOTES = {
    "fusion-log.md": "# Fusion log\n\nWe switched how our two lists are merged to RRF "
    "fusion, and the ranking became stable across query types.\n",
    "fusion-weights.md": "# Fusion weights\n\nConvex fusion needs a weight per list; we tuned "
    "alpha on a held-out set of queries before trusting it.\n",
    "meeting.md": "# Meeting notes\n\nThe index rebuild runs on Sundays; chunk sizes stay at two "
    "hundred tokens.\n",
    "reading.md": "# Reading list\n\nCormack, Clarke and Buettcher on rank fusion; Bruch on "
    "convex combinations of scores.\n",
}
BROWSER_FLAGS = (
    "--headless",
    "--no-sandbox",  # as root in a container
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
)


def rcpkit_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "rcpkit", *args]


def child_environment(**extra: str) -> dict[str, str]:
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), **extra}
    environment.pop("RCPKIT_EMBEDDER", None)  # the real default model, MiniLM
    environment.pop("RCPKIT_HTTP_TOKENS", None)
    environment.update(extra)
    return environment


class Served:
    """``rcpkit serve --http`` as a child process; ``origin`` is where it listens."""

    def __init__(self, index: Path, *extra: str, environment: dict[str, str]) -> None:
        command = rcpkit_command("serve", "--index", str(index), "--http", "127.0.0.1:0", *extra)
        self.process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=environment
        )
        match, said = read_until(
            self.process, b"", rb"serving RCP over HTTP on (http://\S+)/rcp", timeout=60
        )
        self.origin = match.group(1).decode()
        self.console: str | None = None  # where the server says its console is
        if "--no-ui" not in extra:
            shown, _ = read_until(self.process, said, rb"web console on (http://\S+)\n", 60)
            self.console = shown.group(1).decode()

    def stop(self) -> None:
        stop(self.process)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
