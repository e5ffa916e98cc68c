"""What each framework integration costs over the raw client, per call, in the same run.

One real ``rcpkit serve`` (stdio by default, ``--transport http`` for HTTP) over a
small generated corpus with the hashing embedder, so the server's own time is small
and steady. Every measured surface calls the same server with the same query and k;
the calls are interleaved round by round, so load drift hits every surface alike.
The baseline is the raw blocking client (``SyncClient.retrieve``); the async paths are
also compared with the raw async client awaited on the connection's loop.

    .venv/bin/python benchmarks/integrations_overhead.py [--calls 300] [--transport stdio|http]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")

from haystack import Pipeline
from llama_index.core import Settings, VectorStoreIndex
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.llms import MockLLM

from rcpkit.client import Client
from rcpkit.integrations import Connection
from rcpkit.integrations import haystack as hs
from rcpkit.integrations import langchain as lc
from rcpkit.integrations import llamaindex as li

QUERY = "how does reciprocal rank fusion combine rankings"
K = 5


def corpus(size: int) -> list[dict[str, object]]:
    words = ("fusion", "bm25", "rank", "dense", "sparse", "citation", "rerank", "token")
    return [
        {
            "id": f"doc-{number}",
            "text": " ".join(words[(number * 7 + step) % len(words)] for step in range(40)),
            "meta": {"year": 2000 + number % 25, "lang": "en" if number % 2 else "de"},
        }
        for number in range(size)
    ]


def surfaces(connection: Connection) -> dict[str, Callable[[], object]]:
    """The blocking calls, each returning K hits of the same query."""
    Settings.embed_model = MockEmbedding(embed_dim=8)
    Settings.llm = MockLLM()
    langchain = lc.RCPRetriever(connection=connection, k=K)
    llama = li.RCPRetriever(connection, similarity_top_k=K)
    index = VectorStoreIndex.from_vector_store(li.RCPVectorStore(connection))
    # The server's default mode (hybrid) on every surface; LlamaIndex's own default is dense.
    llama_index = index.as_retriever(similarity_top_k=K, vector_store_query_mode="hybrid")
    store = hs.RCPDocumentStore.from_connection(connection)  # the same session as the rest
    component = hs.RCPRetriever(document_store=store, top_k=K)
    pipeline = Pipeline()
    pipeline.add_component("retriever", hs.RCPRetriever(document_store=store, top_k=K))
    client = connection.client
    return {
        "raw SyncClient.retrieve": lambda: client.retrieve(QUERY, k=K).hits,
        "LangChain RCPRetriever.invoke": lambda: langchain.invoke(QUERY),
        "LlamaIndex RCPRetriever.retrieve": lambda: llama.retrieve(QUERY),
        "LlamaIndex VectorStoreIndex retriever (RCPVectorStore.query)": lambda: (
            llama_index.retrieve(QUERY)
        ),
        "Haystack RCPRetriever.run": lambda: component.run(query=QUERY),
        "Haystack Pipeline.run": lambda: pipeline.run({"retriever": {"query": QUERY}}),
    }


def async_surfaces(connection: Connection) -> dict[str, Callable[[], Awaitable[object]]]:
    langchain = lc.RCPRetriever(connection=connection, k=K)
    llama = li.RCPRetriever(connection, similarity_top_k=K)
    store = hs.RCPDocumentStore.from_connection(connection)
    component = hs.RCPRetriever(document_store=store, top_k=K)

    async def raw() -> object:
        async def work(client: Client) -> object:
            return (await client.retrieve(QUERY, k=K)).hits

        return await connection.run(work)

    return {
        "raw Client.retrieve (awaited)": raw,
        "LangChain RCPRetriever.ainvoke": lambda: langchain.ainvoke(QUERY),
        "LlamaIndex RCPRetriever.aretrieve": lambda: llama.aretrieve(QUERY),
        "Haystack RCPRetriever.run_async": lambda: component.run_async(query=QUERY),
    }


def measure(
    blocking: dict[str, Callable[[], object]],
    awaited: dict[str, Callable[[], Awaitable[object]]],
    calls: int,
) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {name: [] for name in [*blocking, *awaited]}

    async def rounds() -> None:
        for name, call in blocking.items():  # warm-up, and every surface answers K hits
            assert len(_hits(call())) == K, name
        for name, acall in awaited.items():
            assert len(_hits(await acall())) == K, name
        for _ in range(calls):
            for name, call in blocking.items():
                start = time.perf_counter()
                call()
                samples[name].append(time.perf_counter() - start)
            for name, acall in awaited.items():
                start = time.perf_counter()
                await acall()
                samples[name].append(time.perf_counter() - start)

    asyncio.run(rounds())
    return samples


def _hits(result: object) -> list[object]:
    if isinstance(result, dict):  # a Haystack component's or pipeline's output
        inner = result.get("retriever", result)
        return list(inner["documents"])
    assert isinstance(result, list)
    return result


def report(
    samples: dict[str, list[float]], asynchronous: set[str], transport: str, calls: int
) -> str:
    sync_base = statistics.median(samples["raw SyncClient.retrieve"])
    async_base = statistics.median(samples["raw Client.retrieve (awaited)"])
    lines = [
        f"{calls} calls per surface, k={K}, over {transport}, interleaved round by round",
        "",
        "| surface | p50 ms | over its raw baseline |",
        "|---|---|---|",
    ]
    for name, values in samples.items():
        base = async_base if name in asynchronous else sync_base
        p50 = statistics.median(values)
        extra = (p50 - base) * 1e6
        ratio = "baseline" if name.startswith("raw") else f"{p50 / base:.2f}x ({extra:+.0f} µs)"
        lines.append(f"| {name} | {p50 * 1e3:.2f} | {ratio} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--documents", type=int, default=200)
    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        index = Path(folder) / "index"
        serve = [sys.executable, "-m", "rcpkit", "serve", "--index", str(index), "--create",
                 "--embedder", "hashing:64"]  # fmt: skip
        if args.transport == "http":
            return _over_http(serve, args)
        with Connection.stdio(serve) as connection:
            connection.client.index_add(corpus(args.documents), chunk=False)
            samples, asynchronous = _run(connection, args.calls)
    print(report(samples, asynchronous, args.transport, args.calls))
    return 0


def _run(connection: Connection, calls: int) -> tuple[dict[str, list[float]], set[str]]:
    awaited = async_surfaces(connection)
    return measure(surfaces(connection), awaited, calls), set(awaited)


def _over_http(serve: list[str], args: argparse.Namespace) -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "client"))
    from client_support import announced_http

    words = [*serve, "--http", "127.0.0.1:0", "--allow-unauthenticated-writes"]
    with announced_http(words, timeout=60.0) as (url, _), Connection.http(url) as connection:
        connection.client.index_add(corpus(args.documents), chunk=False)
        samples, asynchronous = _run(connection, args.calls)
    print(report(samples, asynchronous, args.transport, args.calls))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
