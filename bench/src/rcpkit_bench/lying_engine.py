"""Engines that lie, for ``rcpkit bench gateway`` (issue 34): one misbehaviour each.

    python -m rcpkit_bench.lying_engine MODE [DEPTH]

A bare NDJSON loop (no rcpkit server underneath: the lies are on the wire).
It completes ``initialize``, ``ping`` and ``shutdown`` properly and advertises
``retrieve`` (with ``confidence``); what it does with a ``retrieve`` is MODE:

* ``confident``: unrelated hits, each claiming ``confidence`` 0.99;
* ``huge``: one hit whose text is 24 MiB;
* ``wrong-ids``: hits whose ids are objects, ``null`` and booleans;
* ``duplicate-ids``: the same id five times;
* ``non-json``: a line that is not JSON;
* ``twice``: the right answer, sent twice;
* ``other-id``: an answer carrying another request's id (the previous one);
* ``silent``: nothing, ever;
* ``catalog-loop``: also advertises ``catalog``, and ``catalog/list`` names one
  engine: itself again one level deeper (``DEPTH`` + 1), a discovery that never
  ends on its own.

Every hit it returns has an id starting ``liar-``, so a campaign can tell them
from the honest engine's.
"""

from __future__ import annotations

import json
import sys
from typing import Any

__all__ = ["MODES", "answer"]

MODES = (
    "confident",
    "huge",
    "wrong-ids",
    "duplicate-ids",
    "non-json",
    "twice",
    "other-id",
    "silent",
    "catalog-loop",
)
_HUGE = 24 * 1024 * 1024
_RETRIEVE = {"maxK": 100, "modes": ["sparse"], "confidence": True}


def _hits(count: int, confidence: float | None = None) -> list[dict[str, Any]]:
    hits: list[dict[str, Any]] = [
        {"id": f"liar-{n}", "score": 10.0 - n, "text": f"unrelated filler {n}"}
        for n in range(count)
    ]
    if confidence is not None:
        for hit in hits:
            hit["confidence"] = confidence
    return hits


def _retrieve(mode: str) -> Any:
    if mode == "confident":
        return {"hits": _hits(6, 0.99)}
    if mode == "huge":
        return {"hits": [{"id": "liar-huge", "score": 1.0, "text": "x" * _HUGE}]}
    if mode == "wrong-ids":
        hits = [{"id": {"nested": 1}, "score": 1.0}, {"id": None, "score": 0.5}]
        return {"hits": [*hits, {"id": True, "score": 0.1}]}
    if mode == "duplicate-ids":
        return {"hits": [{"id": "liar-dup", "score": 5.0 - n, "text": "dup"} for n in range(5)]}
    return {"hits": _hits(3)}


def answer(mode: str, depth: int, message: dict[str, Any], previous: Any) -> list[str]:
    """The lines this engine writes for one incoming message (none for a notification)."""
    id, method = message.get("id"), message.get("method")
    if id is None:
        return []

    def result(value: Any, reply_id: Any = id) -> str:
        return json.dumps({"jsonrpc": "2.0", "id": reply_id, "result": value})

    if method == "initialize":
        capabilities: dict[str, Any] = {"retrieve": _RETRIEVE}
        if mode == "catalog-loop":
            capabilities["catalog"] = {"engines": 1}
        info = {"name": f"liar-{mode}-{depth}", "version": "1"}
        return [result({"protocolVersion": 1, "server": info, "capabilities": capabilities})]
    if method == "catalog/list":
        command = [sys.executable, "-m", "rcpkit_bench.lying_engine", mode, str(depth + 1)]
        entry = {"id": f"level-{depth + 1}", "server": {"name": "liar", "version": "1"}}
        entry["capabilities"] = {"retrieve": _RETRIEVE, "catalog": {"engines": 1}}
        entry["endpoint"] = {"transport": "stdio", "command": command}
        return [result({"engines": [entry]})]
    if method != "retrieve":  # ping (its nonce echoed, §7.15), shutdown, the rest
        params = message.get("params")
        nonce = params.get("nonce") if isinstance(params, dict) else None
        return [result({} if nonce is None else {"nonce": nonce})]
    if mode == "silent":
        return []
    if mode == "non-json":
        return ["this is not json {"]
    if mode == "twice":
        return [result(_retrieve(mode))] * 2
    if mode == "other-id":
        return [result(_retrieve(mode), previous if previous is not None else f"x-{id}")]
    return [result(_retrieve(mode))]


def main(argv: list[str]) -> int:
    mode = argv[0] if argv else "confident"
    depth = int(argv[1]) if len(argv) > 1 else 0
    if mode not in MODES:
        print(f"lying_engine: one of {', '.join(MODES)}", file=sys.stderr)
        return 2
    previous: Any = None
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if not isinstance(message, dict):
            continue
        for reply in answer(mode, depth, message, previous):
            sys.stdout.write(reply + "\n")
        sys.stdout.flush()
        if message.get("method") == "retrieve":
            previous = message.get("id")
        if message.get("method") == "shutdown":
            break
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
