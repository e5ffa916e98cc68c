"""A raw NDJSON RCP server written from the spec, without rcpkit: a checker test peer.

``python raw_server_support.py [--declare L2] [--bug NAME]`` serves stdio. It
implements an honest L0 (sparse retrieve with citations); ``--declare`` sets
``_meta.conformance`` to anything, and each ``--bug`` breaks one MUST.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

CORE = {
    "embed": "embed",
    "embed/sparse": "sparseEmbed",
    "embed/multi": "multiVector",
    "rerank": "rerank",
    "retrieve": "retrieve",
    "query/transform": "transform",
    "graph": "graph",
    "index/add": "index",
    "index/delete": "index",
    "catalog/list": "catalog",
    "feedback": "feedback",
    "memory/build": "memory",
    "memory/recall": "memory",
}
CAPABILITIES = {"retrieve": {"maxK": 10, "modes": ["sparse"]}, "citations": {}}
DOCUMENTS = {
    "d1": "retrieval ranks documents for a query",
    "d2": "dense retrieval uses vectors",
    "d3": "lexical retrieval counts words in documents",
}


class Refusal(Exception):
    def __init__(self, code: int, message: str, data: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code, self.data = code, data


def is_id(value: Any) -> bool:
    return isinstance(value, str | int | float) and not isinstance(value, bool)


class Server:
    def __init__(self, declare: str, bugs: set[str]) -> None:
        self.declare, self.bugs = declare, bugs
        self.initialized = False

    def info(self, version: int = 1) -> dict[str, Any]:
        return {
            "protocolVersion": version,
            "server": {"name": "raw-server", "version": "1"},
            "capabilities": CAPABILITIES,
            "_meta": {"conformance": self.declare},
        }

    def message(self, value: Any) -> dict[str, Any] | None:
        if not isinstance(value, dict):
            return error(None, -32600, "not an object")
        has_id = "id" in value
        id = value.get("id") if has_id and is_id(value.get("id")) else None
        if value.get("jsonrpc") != "2.0" or not isinstance(value.get("method"), str):
            return error(id, -32600, "invalid request")
        if has_id and id is None:
            return error(None, -32600, "invalid id")
        if not has_id:
            return {"jsonrpc": "2.0", "id": None, "result": {}} if "notify" in self.bugs else None
        method, params = value["method"], value.get("params", {})
        if params is None:
            params = {}
        if not isinstance(params, dict):
            return error(id, -32602, "params must be an object")
        params = {key: item for key, item in params.items() if item is not None}
        try:
            result = self.call(method, params)
        except Refusal as refusal:
            return error(id, refusal.code, str(refusal), refusal.data)
        echoed = str(id) if "id-type" in self.bugs else id
        return {"jsonrpc": "2.0", "id": echoed, "result": result}

    def call(self, method: str, params: dict[str, Any]) -> Any:
        if method.startswith("notifications/"):
            raise Refusal(-32600, "a notification carries no id")
        if method == "initialize":
            version = params.get("protocolVersion")
            if not isinstance(version, int) or isinstance(version, bool):
                raise Refusal(-32602, "protocolVersion")
            if self.initialized:
                raise Refusal(-32600, "already initialized")
            if min(version, 1) < 1:
                raise Refusal(-32002, "no common version")
            self.initialized = True
            return self.info(min(version, 1))
        if method == "info":
            return self.info()
        if method == "ping":
            nonce = params.get("nonce")
            if nonce is not None and not is_id(nonce):
                raise Refusal(-32602, "nonce")
            return {} if nonce is None else {"nonce": nonce}
        if method == "shutdown":
            return {}
        if method not in CORE:
            raise Refusal(-32004, "unknown method")
        if not self.initialized:
            raise Refusal(-32001, "not initialized")
        if CORE[method] not in CAPABILITIES:
            raise Refusal(-32003, "capability missing")
        return self.retrieve(params)

    def retrieve(self, params: dict[str, Any]) -> Any:
        query, k = params.get("query"), params.get("k", 10)
        if not isinstance(query, str):
            raise Refusal(-32602, "query")
        if not isinstance(k, int) or isinstance(k, bool) or k < 1:
            raise Refusal(-32602, "k")
        candidate_k = params.get("candidateK")
        if "funnel" not in self.bugs and isinstance(candidate_k, int) and candidate_k < k:
            raise Refusal(-32602, "candidateK", {"field": "candidateK"})  # §3.3
        if params.get("mode", "sparse") != "sparse":
            raise Refusal(-32005, "mode")
        for option in ("filter", "fusion", "rerank", "mmr", "cursor"):
            if option in params:
                raise Refusal(-32005, option)
        floor = params.get("minScore")
        words = set(query.lower().split())
        hits = []
        for id, text in sorted(DOCUMENTS.items()):
            score = float(len(words & set(text.split())))
            if score > 0 and (floor is None or score >= floor):
                hits.append({"id": id, "score": score, "text": text, "citation": {"source": id}})
        hits.sort(key=lambda hit: -hit["score"])
        return {"hits": hits[: min(k, 10)]}


def error(id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        body["data"] = data
    return {"jsonrpc": "2.0", "id": id, "error": body}


def answer(server: Server, line: str) -> Any:
    try:
        value = json.loads(line)
    except ValueError:
        return error(None, -32700, "parse error")
    if isinstance(value, list):
        if not value:
            return error(None, -32600, "empty batch")
        answers = [reply for reply in map(server.message, value) if reply is not None]
        return answers or None
    return server.message(value)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--declare", default="L0")
    parser.add_argument("--bug", action="append", default=[])
    args = parser.parse_args()
    server = Server(args.declare, set(args.bug))
    for line in sys.stdin:
        if not line.strip():
            continue
        reply = answer(server, line)
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
