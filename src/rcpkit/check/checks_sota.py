"""L2: the §14.3 surfaces a server advertises, each held to what its section says."""

from __future__ import annotations

import base64
import json
from typing import Any

from rcpkit.check.context import Context, expect_error, scores_descend
from rcpkit.check.model import Check, Failed, Skipped
from rcpkit.check.peer import same_id

__all__ = ["SOTA"]

_PASSAGES = ["retrieval ranks documents", "bananas are yellow", "rank fusion merges lists"]


def _needs(*keys: str) -> Any:
    def applies(ctx: Context) -> None:
        for key in keys:
            ctx.require(key)

    return applies


async def rerank_methods(ctx: Context) -> str | None:
    methods = ctx.listed("rerank", "methods") or [None]
    for method in methods:
        params: dict[str, Any] = {"query": ctx.query, "passages": _PASSAGES}
        if method is not None:
            params["method"] = method
        result = await ctx.result("rerank", params)
        scores = result.get("scores") if isinstance(result, dict) else None
        if not isinstance(scores, list) or len(scores) != len(_PASSAGES):
            raise Failed(f"rerank {method}: one score per passage is required")
        order = result.get("order")
        valid = range(len(_PASSAGES))
        if order is not None and (
            not isinstance(order, list)
            or len(set(order)) != len(order)
            or not set(order) <= set(valid)
        ):
            raise Failed(f"rerank {method}: `order` must be distinct passage indices")
    return ", ".join(str(method) for method in methods)


async def progress_echoed(ctx: Context) -> str | None:
    frames_seen = 0
    for token in ("rcpcheck-token", 4242):
        params = {"query": ctx.query, "k": 3, "_meta": {"progressToken": token}}
        message = {"jsonrpc": "2.0", "id": ctx.new_id(), "method": "retrieve", "params": params}
        exchange = await ctx.send(message, stream=True)
        reply = exchange.only()
        if "result" not in reply:
            raise Failed(f"a streamed retrieve failed: {json.dumps(reply)[:100]}")
        for frame in exchange.notifications:
            frame_params = frame.get("params") or {}
            if frame.get("method") != "notifications/progress":
                continue
            frames_seen += 1
            echoed = frame_params.get("progressToken")
            if not same_id(echoed, token):
                raise Failed(f"progressToken {token!r} came back as {echoed!r}")
            progress = frame_params.get("progress")
            if progress is not None and not (
                isinstance(progress, int | float) and 0.0 <= progress <= 1.0
            ):
                raise Failed(f"progress {progress!r} is outside [0, 1]")
        if ctx.peer.transport == "stdio":
            late = await ctx.send({"jsonrpc": "2.0", "method": "notifications/x"}, replies=0)
            if any(f.get("method") == "notifications/progress" for f in late.notifications):
                raise Failed("progress arrived after the final response")
    return f"{frames_seen} frames, tokens echoed" if frames_seen else "no frames (allowed: MAY)"


async def no_progress_without_token(ctx: Context) -> str | None:
    message = {
        "jsonrpc": "2.0",
        "id": ctx.new_id(),
        "method": "retrieve",
        "params": {"query": ctx.query, "k": 3},
    }
    exchange = await ctx.send(message, stream=True)
    exchange.only()
    if any(frame.get("method") == "notifications/progress" for frame in exchange.notifications):
        raise Failed("progress was emitted for a request that carried no progressToken")
    return None


async def pagination(ctx: Context) -> str | None:
    first = await ctx.result("retrieve", {"query": ctx.query, "k": 1})
    cursor = first.get("nextCursor") if isinstance(first, dict) else None
    if not cursor:
        raise Skipped("no nextCursor for the probe query (a single page)")
    second = await ctx.result("retrieve", {"query": ctx.query, "k": 1, "cursor": cursor})
    ids = {str(hit.get("id")) for hit in first.get("hits", [])}
    again = [str(hit.get("id")) for hit in second.get("hits", []) if str(hit.get("id")) in ids]
    if again:
        raise Failed(f"the next page repeats {again}")
    return None


async def deterministic(ctx: Context) -> str | None:
    params = {"query": ctx.query, "k": 5, "seed": 12345}
    first = await ctx.hits(params)
    second = await ctx.hits(params)
    if [(h["id"], h["score"]) for h in first] != [(h["id"], h["score"]) for h in second]:
        raise Failed("the same seeded retrieve returned different hits")
    return None


def _snapshots(ctx: Context) -> None:
    ctx.require("retrieve")
    if ctx.cap("retrieve").get("snapshots") is not True:
        raise Skipped("retrieve.snapshots is not advertised")


def _deterministic(ctx: Context) -> None:
    ctx.require("retrieve")
    if ctx.cap("retrieve").get("deterministic") is not True:
        raise Skipped("retrieve.deterministic is not advertised")


async def snapshots(ctx: Context) -> str | None:
    first = await ctx.result("retrieve", {"query": ctx.query, "k": 3})
    version = first.get("indexVersion") if isinstance(first, dict) else None
    if not isinstance(version, str):
        raise Failed("a snapshot-capable server echoes the served indexVersion")
    pinned = await ctx.result("retrieve", {"query": ctx.query, "k": 3, "indexVersion": version})
    if pinned.get("indexVersion") != version:
        raise Failed(f"pinned {version!r} but {pinned.get('indexVersion')!r} was served")
    # A version this server never served: the numbering's next-but-many when it is
    # numeric (§7.7.1: -32010, §12: -32016), else a token it cannot know (-32602 too).
    unknown, codes = "rcpcheck-no-such-snapshot", {-32010, -32016, -32602}
    if version.isdigit():
        unknown, codes = str(int(version) + 1000), {-32010, -32016}
    reply = await ctx.call("retrieve", {"query": ctx.query, "k": 3, "indexVersion": unknown})
    expect_error(reply, codes, f"pinning indexVersion {unknown!r}, which was never served")
    return f"{version!r} pinned; {unknown!r} refused"


async def multi_vector(ctx: Context) -> str | None:
    dimension = ctx.cap("multiVector").get("dimension")
    result = await ctx.result("embed/multi", {"inputs": ["late interaction", "maxsim"]})
    matrices = result.get("matrices") if isinstance(result, dict) else None
    if not isinstance(matrices, list) or len(matrices) != 2:
        raise Failed("embed/multi must return one matrix per input")
    for matrix in matrices:
        if not isinstance(matrix, list) or not matrix:
            raise Failed("a matrix must hold at least one row")
        if any(not isinstance(row, list) or len(row) != dimension for row in matrix):
            raise Failed(f"a row is not of the advertised dimension {dimension}")
    return None


async def sparse_embed(ctx: Context) -> str | None:
    result = await ctx.result("embed/sparse", {"texts": ["learned sparse", "splade"]})
    vectors = result.get("sparse") if isinstance(result, dict) else None
    if not isinstance(vectors, list) or len(vectors) != 2:
        raise Failed("embed/sparse must return one vector per text")
    for vector in vectors:
        indices, values = vector.get("indices"), vector.get("values")
        if not isinstance(indices, list) or not isinstance(values, list):
            raise Failed("a sparse vector has `indices` and `values` arrays")
        if len(indices) != len(values) or any(
            not isinstance(i, int) or isinstance(i, bool) or i < 0 for i in indices
        ):
            raise Failed("indices must be non-negative integers aligned with values")
    return None


async def transform_methods(ctx: Context) -> str | None:
    for method in ctx.listed("transform", "methods"):
        result = await ctx.result("query/transform", {"query": ctx.query, "method": method})
        queries = result.get("queries") if isinstance(result, dict) else None
        if not isinstance(queries, list) or not all(isinstance(q, str) for q in queries):
            raise Failed(f"query/transform {method}: `queries` must be strings")
    return None


async def graph_ops(ctx: Context) -> str | None:
    for op in ctx.listed("graph", "ops"):
        result = await ctx.result("graph", {"op": op, "query": ctx.query, "k": 3})
        if not isinstance(result, dict):
            raise Failed(f"graph {op}: the result is not an object")
        if op in ("local", "drift"):
            hits = result.get("hits")
            if not isinstance(hits, list):
                raise Failed(f"graph {op} returns `hits`")
            scores_descend(hits)
    return None


def _f32(ctx: Context) -> None:
    ctx.require("embed")
    if "f32-base64" not in ctx.listed("embed", "encodings"):
        raise Skipped("embed does not advertise f32-base64")


async def f32_vectors(ctx: Context) -> str | None:
    result = await ctx.result("embed", {"inputs": ["alpha"], "encoding": "f32-base64"})
    if result.get("encoding") != "f32-base64":
        raise Failed("the result must echo the encoding it used")
    dimension = result.get("dimension")
    if not isinstance(dimension, int):
        raise Failed("a binary encoding needs `dimension` in the result")
    for blob in result.get("vectors", []):
        if len(base64.b64decode(blob)) != dimension * 4:
            raise Failed(f"a blob is not dimension × 4 = {dimension * 4} bytes")
    return None


def _l2(id: str, title: str, section: str, run: Any, applies: Any) -> Check:
    return Check(id, "L2", title, section, run, applies)


SOTA = [
    _l2(
        "rerank",
        "rerank scores every passage, per method",
        "§7.6",
        rerank_methods,
        _needs("rerank"),
    ),
    _l2(
        "progress-token",
        "progress frames echo the progressToken, in [0, 1]",
        "§9",
        progress_echoed,
        _needs("streaming", "retrieve"),
    ),
    _l2(
        "progress-opt-in",
        "no progress without a progressToken",
        "§9",
        no_progress_without_token,
        _needs("streaming", "retrieve"),
    ),
    _l2(
        "pagination",
        "nextCursor fetches the next page",
        "§10",
        pagination,
        _needs("pagination", "retrieve"),
    ),
    _l2(
        "deterministic",
        "a seeded retrieve repeats exactly",
        "§7.7.1",
        deterministic,
        _deterministic,
    ),
    _l2("snapshots", "a pinned indexVersion is served or refused", "§7.7.1", snapshots, _snapshots),
    _l2(
        "multi-vector",
        "embed/multi returns a matrix per input",
        "§7.5",
        multi_vector,
        _needs("multiVector"),
    ),
    _l2(
        "sparse-embed",
        "embed/sparse aligns indices and values",
        "§7.4",
        sparse_embed,
        _needs("sparseEmbed"),
    ),
    _l2(
        "transform",
        "query/transform answers its methods",
        "§7.8",
        transform_methods,
        _needs("transform"),
    ),
    _l2("graph", "graph answers its ops", "§7.9", graph_ops, _needs("graph")),
    _l2(
        "f32-base64",
        "f32-base64 vectors decode to dimension × 4 bytes",
        "§7.3.1",
        f32_vectors,
        _f32,
    ),
]
