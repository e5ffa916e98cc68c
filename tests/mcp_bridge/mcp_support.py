"""Driving ``rcpkit mcp`` with the MCP SDK's own client, over stdio and Streamable HTTP."""

from __future__ import annotations

import os
import sys
import textwrap
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from mcp import StdioServerParameters

_CLIENT = str(Path(__file__).parent.parent / "client")
if _CLIENT not in sys.path:
    sys.path.append(_CLIENT)

from client_support import announced_http  # noqa: E402

SRC = str(Path(__file__).resolve().parents[2] / "src")


def environment() -> dict[str, str]:
    env = {key: os.environ[key] for key in ("PATH", "HOME", "LANG") if key in os.environ}
    env["PYTHONPATH"] = SRC
    return env


def bridge_args(index: Path, *extra: str) -> list[str]:
    """``rcpkit mcp`` over a fresh index with the deterministic hashing embedder."""
    return ["-m", "rcpkit", "mcp", "--index", str(index), "--embedder", "hashing:64", *extra]


def stdio_bridge(args: Sequence[str]) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=list(args), env=environment())


@contextmanager
def http_bridge(args: Sequence[str], timeout: float = 60.0) -> Iterator[str]:
    """Start ``rcpkit mcp ... --http 127.0.0.1:0``; yield the URL it announced."""
    words = list(args)
    cut = words.index("--") if "--" in words else len(words)  # options before `-- CMD`
    words[cut:cut] = ["--http", "127.0.0.1:0"]
    with announced_http([sys.executable, *words], env=environment(), timeout=timeout) as (url, _):
        yield url


SLOW_SERVER = textwrap.dedent(
    """
    import json, sys, threading
    from rcpkit import App
    from rcpkit.protocol import RetrieveParams, RetrieveResult

    record = sys.argv[1]
    app = App("slow-engine", "1.0")
    app.advertise("streaming")

    def note(entry):
        with open(record, "a") as out:
            out.write(json.dumps(entry) + "\\n")

    @app.retrieve(max_k=10, modes=["sparse"])
    def retrieve(params: RetrieveParams, ctx) -> RetrieveResult:
        note({"deadlineMs": ctx.meta.get("deadlineMs")})
        ctx.progress(0.25, "recall", "started")
        stop = threading.Event()
        try:
            for _ in range(600):          # at most 60 s, then answer anyway
                ctx.check_cancelled()
                stop.wait(0.1)
        except Exception as error:
            note({"stopped": getattr(error, "code", None)})
            raise
        return RetrieveResult(hits=[])

    app.run_stdio()
    """
)
