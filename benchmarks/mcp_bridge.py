"""What `rcpkit mcp` costs per call: sequential retrieves, direct RCP vs MCP through the bridge.

.venv/bin/python benchmarks/mcp_bridge.py [N]   (standalone; not yet an `rcpkit bench` suite)

Both sides query the same in-memory keyword engine (`rcpkit serve --engine keyword
--sample`): once with rcpkit's own client over stdio, once with the MCP SDK's client
over stdio to `rcpkit mcp -- <that engine>`, so the difference is the bridge's hop
(MCP JSON-RPC + pydantic + one more process) and nothing else.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import time
from collections.abc import Awaitable, Callable

# Run as a script, this folder comes first on sys.path, and its http.py would
# shadow the standard library's `http` package (which the MCP SDK imports).
_here = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [entry for entry in sys.path if os.path.abspath(entry or ".") != _here]

from mcp import Client as McpClient  # noqa: E402
from mcp import StdioServerParameters  # noqa: E402

from rcpkit.client import Client  # noqa: E402

ENGINE = [sys.executable, "-m", "rcpkit", "serve", "--stdio", "--engine", "keyword", "--sample"]
QUERY = "reciprocal rank fusion"
WARMUP = 20


async def _timed(call: Callable[[], Awaitable[object]], n: int) -> list[float]:
    for _ in range(WARMUP):
        await call()
    times = []
    for _ in range(n):
        started = time.perf_counter()
        await call()
        times.append(time.perf_counter() - started)
    return sorted(times)


async def direct(n: int) -> list[float]:
    async with await Client.connect_stdio(ENGINE, pass_env=["PYTHONPATH"]) as client:
        return await _timed(lambda: client.retrieve(QUERY, k=5), n)


async def bridged(n: int) -> list[float]:
    env = {key: os.environ[key] for key in ("PATH", "HOME", "PYTHONPATH") if key in os.environ}
    args = ["-m", "rcpkit", "mcp", "--", *ENGINE]
    server = StdioServerParameters(command=sys.executable, args=args, env=env)
    async with McpClient(server) as client:
        return await _timed(lambda: client.call_tool("retrieve", {"query": QUERY, "k": 5}), n)


async def main(n: int) -> None:
    for name, run in (("direct RCP client", direct), ("MCP client via rcpkit mcp", bridged)):
        times = await run(n)
        p50, p95 = statistics.median(times), times[int(0.95 * (len(times) - 1))]
        print(f"{name:28} p50 {p50 * 1000:6.2f} ms   p95 {p95 * 1000:6.2f} ms   (n={n})")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 200))
