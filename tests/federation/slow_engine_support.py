"""A real engine subprocess whose ``retrieve`` for "slow" never answers (run as a script).

Its one argument is a file it creates once that ``retrieve`` has begun, so a test
can wait for that event instead of guessing how long the engine takes to get there.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from rcpkit.protocol import messages as m
from rcpkit.server import App

app = App("slow-engine", "1")


@app.retrieve(max_k=10, modes=["sparse"], score_floor=0.0)
async def retrieve(params: m.RetrieveParams) -> m.RetrieveResult:
    if params.query == "slow":
        await asyncio.to_thread(Path(sys.argv[1]).touch)
        await asyncio.Event().wait()  # only a kill or a cancel ends this call
    return m.RetrieveResult(hits=[m.Hit(id="slow-1", score=1.0, text=str(params.query))])


if __name__ == "__main__":
    app.run_stdio()
