"""Real ``rcpkit serve`` processes for the integration tests: a small generated corpus over
stdio or HTTP, the hashing embedder by default (the wiring is under test), MiniLM on request."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

_CLIENT = str(Path(__file__).parent.parent / "client")
if _CLIENT not in sys.path:
    sys.path.append(_CLIENT)

from client_support import announced_http  # noqa: E402

from rcpkit.integrations import Connection  # noqa: E402

HASHING = "hashing:64"
TOPICS = ("fusion", "bm25", "embedding", "citation", "reranking", "pagination")


def corpus() -> list[dict[str, Any]]:
    """Twelve documents, two per topic, with the engine's filterable fields (lang, year, tag)."""
    documents = []
    for number in range(12):
        topic = TOPICS[number % len(TOPICS)]
        documents.append(
            {
                "id": f"doc-{number}",
                "title": f"{topic.title()} note {number}",
                "uri": f"file:///notes/{number}.md",
                "text": f"A note about {topic}: {topic} matters for retrieval, note {number}.",
                "meta": {
                    "lang": "en" if number % 2 == 0 else "de",
                    "year": 2018 + number,
                    "tag": topic,
                },
            }
        )
    return documents


def serve_args(index: Path, *extra: str, embedder: str | None = HASHING) -> list[str]:
    """``rcpkit serve`` over ``index`` (created if missing)."""
    words = [sys.executable, "-m", "rcpkit", "serve", "--index", str(index), "--create"]
    if embedder is not None:
        words += ["--embedder", embedder]
    return [*words, *extra]


@contextmanager
def http_server(
    index: Path, *, embedder: str | None = HASHING, tokens: str | None = None
) -> Iterator[str]:
    """An HTTP server on 127.0.0.1:0; yields its URL.

    Without ``tokens`` it accepts writes from loopback; with them (``TOKEN,...``) every
    call needs a bearer token.
    """
    extra = ["--allow-unauthenticated-writes"] if tokens is None else []
    words = serve_args(index, "--http", "127.0.0.1:0", *extra, embedder=embedder)
    env = {"RCPKIT_HTTP_TOKENS": tokens} if tokens is not None else None
    with announced_http(words, env=env, timeout=60.0) as (url, _):
        yield url


def populate(connection: Connection) -> None:
    connection.client.index_add(corpus(), chunk=False)


# A server that answers the handshake and advertises no method: every integration must
# refuse it by name, not return nothing.
BARE_SERVER = """
from rcpkit import App
App("bare-engine", "1.0").run_stdio()
"""


def bare_server(folder: Path) -> list[str]:
    script = folder / "bare_server.py"
    script.write_text(BARE_SERVER)
    return [sys.executable, str(script)]


# A retrieve that notes when it starts and how it ends, and waits (up to 60 s) to be
# cancelled: what an async framework call does when its task is cancelled.
SLOW_SERVER = """
import json, sys, threading
from rcpkit import App
from rcpkit.protocol import RetrieveParams, RetrieveResult

record = sys.argv[1]
app = App("slow-engine", "1.0")

def note(entry):
    with open(record, "a") as out:
        out.write(json.dumps(entry) + "\\n")

@app.retrieve(max_k=10, modes=["sparse"])
def retrieve(params: RetrieveParams, ctx) -> RetrieveResult:
    note({"started": True})
    stop = threading.Event()
    try:
        for _ in range(600):
            ctx.check_cancelled()
            stop.wait(0.1)
    except Exception as error:
        note({"stopped": getattr(error, "code", None)})
        raise
    return RetrieveResult(hits=[])

app.run_stdio()
"""


def slow_server(folder: Path) -> tuple[list[str], Path]:
    script, record = folder / "slow_server.py", folder / "record.jsonl"
    script.write_text(SLOW_SERVER)
    return [sys.executable, str(script), str(record)], record


async def until_recorded(record: Path, key: str, timeout: float = 60.0) -> dict[str, Any]:
    """The first line of the child's record that has ``key``, within ``timeout``."""
    import asyncio
    import json

    def read() -> list[dict[str, Any]]:
        lines = record.read_text().splitlines() if record.exists() else []
        return [json.loads(line) for line in lines]

    async with asyncio.timeout(timeout):
        while True:
            for entry in await asyncio.to_thread(read):
                if key in entry:
                    return entry
            await asyncio.sleep(0.05)  # the child is another process: poll its record
