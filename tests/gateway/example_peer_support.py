"""An engine in the shape of the spec authors' example server (``rcp.Server``, PyPI
rcp-protocol), written for these tests: ``embed`` and dense ``retrieve`` over a hashed
bag of words, ``graph`` with ``local``/``global``, and a ``rerank`` that reads
``documents`` and answers ``results`` (the shape the authors' harness checks) — so a
spec-shaped ``rerank {query, passages}`` gets ``results: []`` and no ``scores``, as the
issue 34 probe saw. It declares no conformance level and never takes writes.

Run as a script: ``python example_peer_support.py`` serves stdio.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

import rcp

WIDTH = 64
CORPUS = {
    "e1": "the eiffel tower is a lattice tower in paris",
    "e2": "photosynthesis turns light into chemical energy in plants",
    "e3": "reciprocal rank fusion merges ranked lists from many engines",
}


def vector(text: str) -> list[float]:
    values = [0.0] * WIDTH
    for word in text.lower().split():
        values[int(hashlib.sha256(word.encode()).hexdigest(), 16) % WIDTH] += 1.0
    norm = math.sqrt(sum(value * value for value in values)) or 1.0
    return [value / norm for value in values]


def ranked(query: str, k: int) -> list[dict[str, Any]]:
    asked = vector(query)
    scored = [
        (sum(a * b for a, b in zip(asked, vector(text), strict=True)), id, text)
        for id, text in CORPUS.items()
    ]
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [{"id": id, "score": score, "text": text} for score, id, text in scored[:k]]


def rerank(params: dict[str, Any]) -> dict[str, Any]:
    documents = params.get("documents") or []
    asked = vector(str(params.get("query", "")))
    results = [
        {"index": index, "score": sum(a * b for a, b in zip(asked, vector(str(text)), strict=True))}
        for index, text in enumerate(documents)
    ]
    return {"results": sorted(results, key=lambda item: -item["score"])}


def graph(params: dict[str, Any]) -> dict[str, Any]:
    if params.get("op") == "global":
        return {"summary": "three unrelated notes", "communities": []}
    return {"hits": ranked(str(params.get("query", "")), int(params.get("k", 5)))}


def main() -> None:
    server = rcp.Server()
    server.set_info("rcp-example", "1.0.0")
    server.advertise(rcp.Capability.Embed, {"dimensions": WIDTH, "modes": ["dense"]})
    server.advertise(rcp.Capability.Retrieve, {"maxK": 100, "modes": ["dense"]})
    server.advertise(rcp.Capability.Graph, {"ops": ["local", "global"]})
    server.advertise(rcp.Capability.Rerank, {"methods": ["cross-encoder"]})
    server.on("embed", lambda p: {"vectors": [vector(t) for t in p.get("inputs", [])]})
    server.on("retrieve", lambda p: {"hits": ranked(str(p.get("query", "")), int(p.get("k", 10)))})
    server.on("graph", graph)
    server.on("rerank", rerank)
    server.serve_stdio()


if __name__ == "__main__":
    main()
