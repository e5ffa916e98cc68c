"""A real engine subprocess (run as a script): "slow" takes 30 s, "die" kills the process."""

from __future__ import annotations

import asyncio
import os

from rcpkit.protocol import messages as m
from rcpkit.server import App

app = App("flaky-engine", "1")


@app.retrieve(max_k=10, modes=["sparse"], score_floor=0.0)
async def retrieve(params: m.RetrieveParams) -> m.RetrieveResult:
    if params.query == "slow":
        await asyncio.sleep(30)
    if params.query == "die":
        os._exit(3)
    return m.RetrieveResult(hits=[m.Hit(id="flaky-1", score=1.0, text=str(params.query))])


if __name__ == "__main__":
    app.run_stdio()
