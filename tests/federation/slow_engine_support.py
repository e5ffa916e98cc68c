"""A real engine subprocess whose ``retrieve`` for "slow" takes its time (run as a script)."""

from __future__ import annotations

import asyncio

from rcpkit.protocol import messages as m
from rcpkit.server import App

app = App("slow-engine", "1")


@app.retrieve(max_k=10, modes=["sparse"], score_floor=0.0)
async def retrieve(params: m.RetrieveParams) -> m.RetrieveResult:
    if params.query == "slow":
        await asyncio.sleep(30)
    return m.RetrieveResult(hits=[m.Hit(id="slow-1", score=1.0, text=str(params.query))])


if __name__ == "__main__":
    app.run_stdio()
