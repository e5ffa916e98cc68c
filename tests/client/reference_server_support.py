"""A server built from the reference SDK's ``rcp.Server`` (PyPI rcp-protocol): an interop peer.

Run as a script: ``python reference_server_support.py`` serves stdio.
"""

from __future__ import annotations

from typing import Any

import rcp

DOCUMENTS = {
    "r1": "reciprocal rank fusion combines ranked lists",
    "r2": "dense retrieval embeds queries and passages",
    "r3": "bm25 is a lexical ranking function",
}


def retrieve(params: dict[str, Any]) -> dict[str, Any]:
    words = set(str(params.get("query", "")).lower().split())
    scored = [(len(words & set(text.split())), id, text) for id, text in sorted(DOCUMENTS.items())]
    hits = [
        {"id": id, "score": float(score), "text": text, "citation": {"source": f"docs/{id}"}}
        for score, id, text in sorted(scored, key=lambda item: (-item[0], item[1]))
        if score > 0
    ]
    return {"hits": hits[: int(params.get("k", 10))]}


def main() -> None:
    server = rcp.Server()
    server.set_info("reference-peer", "1.0")
    server.set_conformance("L0")
    server.advertise(rcp.Capability.Retrieve, {"maxK": 10, "modes": ["sparse"]})
    server.advertise(rcp.Capability.Citations)
    server.on("retrieve", retrieve)
    server.serve_stdio()


if __name__ == "__main__":
    main()
