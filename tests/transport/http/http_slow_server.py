"""A server for the graceful-shutdown test: its retrieve takes a while, like a backend call.

python tests/transport/http/http_slow_server.py SECONDS
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from rcpkit.protocol import messages as m
from rcpkit.server.app import App
from rcpkit.transport.http import HttpConfig, Listen, run_http


def main(seconds: float) -> None:
    app = App("slow", "1")

    @app.retrieve(max_k=5, modes=["sparse"])
    async def retrieve(params: m.RetrieveParams) -> dict[str, Any]:
        print("handler started", file=sys.stderr, flush=True)
        await asyncio.sleep(seconds)  # the work itself, not a wait for something
        return {"hits": [{"id": str(params.query), "score": 1.0}]}

    run_http(app.server, HttpConfig(), Listen(port=0, drain_timeout=10))


if __name__ == "__main__":
    main(float(sys.argv[1]))
