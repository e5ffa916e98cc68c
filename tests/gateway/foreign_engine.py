"""A foreign engine for the federation tests, written with the spec authors' SDK (``rcp``).

Like the SDK's example server it returns its whole small corpus for every
query, scored by a bag-of-words cosine, with no ``confidence`` and no
``scoreFloor``: the gateway has to calibrate it from its scores alone.

    python foreign_engine.py
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any

import rcp

DOCS = {
    "astro-1": "A black hole is a region of spacetime where gravity prevents light escaping.",
    "astro-2": "Neutron stars are the collapsed cores of massive stars after a supernova.",
    "astro-3": "The Andromeda galaxy is the nearest large spiral galaxy to the Milky Way.",
}


def _bag(text: str) -> Counter[str]:
    return Counter(re.findall(r"[a-z]+", text.lower()))


def _cosine(a: Counter[str], b: Counter[str]) -> float:
    dot = sum(a[t] * b[t] for t in a)
    norm = math.sqrt(sum(v * v for v in a.values())) * math.sqrt(sum(v * v for v in b.values()))
    return dot / norm if norm else 0.0


def main() -> None:
    server = rcp.Server()
    server.set_info("foreign-astro", "1.0")
    server.advertise(rcp.Capability.Retrieve, {"maxK": 100, "modes": ["dense"]})

    def retrieve(params: dict[str, Any]) -> dict[str, Any]:
        query = _bag(str(params.get("query", "")))
        scored = sorted(
            ((_cosine(query, _bag(text)), doc, text) for doc, text in DOCS.items()),
            key=lambda item: (-item[0], item[1]),
        )
        k = int(params.get("k", 10))
        return {"hits": [{"id": d, "score": s, "text": t} for s, d, t in scored[:k]]}

    server.on("retrieve", retrieve)
    server.serve_stdio()


if __name__ == "__main__":
    main()
