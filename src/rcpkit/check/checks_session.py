"""L0 on an initialized session: gating codes, ids, validation, notifications, cancel (§14.1)."""

from __future__ import annotations

import json
from typing import Any

from rcpkit.check.context import Context, describe, expect_error
from rcpkit.check.model import Check, Failed, Skipped
from rcpkit.check.peer import same_id

__all__ = ["SESSION"]

# A core method per capability, with params valid for it, to probe -32003.
_GATED: list[tuple[str, str, dict[str, Any]]] = [
    ("embed", "embed", {"inputs": ["x"]}),
    ("sparseEmbed", "embed/sparse", {"texts": ["x"]}),
    ("multiVector", "embed/multi", {"inputs": ["x"]}),
    ("rerank", "rerank", {"query": "x", "passages": ["a"]}),
    ("retrieve", "retrieve", {"query": "x"}),
    ("transform", "query/transform", {"query": "x", "method": "rewrite"}),
    ("graph", "graph", {"op": "local", "query": "x"}),
    ("catalog", "catalog/list", {}),
    ("feedback", "feedback", {"signals": [{"hitId": "a", "used": True}]}),
    ("memory", "memory/recall", {"query": "x"}),
]


def _message(id: Any, method: str, params: Any = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


async def _raw_reply(ctx: Context, data: bytes, method: str | None = None) -> Any:
    exchange = await ctx.send(data, method=method)
    return exchange.only()


async def unknown_method(ctx: Context) -> str | None:
    await ctx.error("rcpcheck/undefined", {}, {-32004})
    return None


async def capability_missing(ctx: Context) -> str | None:
    for key, method, params in _GATED:
        if not ctx.has(key):
            await ctx.error(method, params, {-32003})
            return f"{method} → -32003"
    raise Skipped("every core capability is advertised")


def _unsupported_option(ctx: Context) -> tuple[str, dict[str, Any], str] | None:
    q = ctx.query
    if ctx.has("retrieve"):
        modes = ctx.listed("retrieve", "modes")
        missing = [mode for mode in ("dense", "sparse", "hybrid") if mode not in modes]
        if missing:
            return "retrieve", {"query": q, "mode": missing[0]}, f"mode {missing[0]!r}"
        fusion = ctx.listed("retrieve", "fusion")
        absent = [name for name in ("rrf", "weighted", "convex") if name not in fusion]
        if absent:
            params = {"query": q, "mode": "hybrid", "fusion": {"method": absent[0]}}
            return "retrieve", params, f"fusion {absent[0]!r}"
    if ctx.has("rerank"):
        methods = ctx.listed("rerank", "methods")
        absent = [name for name in ("cross-encoder", "colbert", "llm") if name not in methods]
        if absent:
            params = {"query": q, "passages": ["a"], "method": absent[0]}
            return "rerank", params, f"method {absent[0]!r}"
    if ctx.has("embed") and "f32-base64" not in ctx.listed("embed", "encodings"):
        return "embed", {"inputs": ["x"], "encoding": "f32-base64"}, "encoding 'f32-base64'"
    return None


async def option_unsupported(ctx: Context) -> str | None:
    found = _unsupported_option(ctx)
    if found is None:
        raise Skipped("every probed option is advertised")
    method, params, what = found
    await ctx.error(method, params, {-32005})
    return f"{method} {what} → -32005"


async def ids_echoed(ctx: Context) -> str | None:
    for id in ("7", 7, -3, 9007199254740991, "rcpcheck-ü-☃"):
        reply = await _raw_reply(ctx, _message(id, "ping", {}), "ping")
        echoed = reply.get("id") if isinstance(reply, dict) else None
        if not same_id(echoed, id):
            raise Failed(f"id {id!r} ({type(id).__name__}) came back as {echoed!r}")
    return None


async def invalid_params(ctx: Context) -> str | None:
    probe = ctx.probe()
    await ctx.error(probe.method, probe.malformed, {-32602})
    await ctx.result("ping")  # still serving
    return f"{probe.method} {json.dumps(probe.malformed)[:60]} → -32602"


async def positional_params(ctx: Context) -> str | None:
    reply = await _raw_reply(ctx, _message("rcpcheck-positional", "ping", [1, 2]), "ping")
    expect_error(reply, {-32602, -32600}, "ping with array params")
    return None


async def parse_error(ctx: Context) -> str | None:
    exchange = await ctx.send(b'{"jsonrpc": "2.0", "id": 1, "method": "ping"', method="ping")
    if exchange.status == 400 and not exchange.replies:
        pass  # §5.2: 400 when no JSON-RPC body can be produced
    else:
        reply = exchange.only()
        expect_error(reply, {-32700}, "invalid JSON")
        if reply.get("id") is not None:
            raise Failed(f"a parse error must carry id null, got {reply.get('id')!r}")
    await ctx.result("ping")
    return None


async def invalid_request(ctx: Context) -> str | None:
    probes = [
        b'{"jsonrpc": "2.0", "id": "rcpcheck-no-method"}',
        b'{"jsonrpc": "1.0", "id": "rcpcheck-v1", "method": "ping"}',
        b'{"jsonrpc": "2.0", "id": "rcpcheck-m", "method": 5}',
        b'{"jsonrpc": "2.0", "id": true, "method": "ping"}',
    ]
    for data in probes:
        exchange = await ctx.send(data)
        if exchange.status == 400 and not exchange.replies:
            continue
        expect_error(exchange.only(), {-32600}, data.decode())
    return None


async def notifications_unanswered(ctx: Context) -> str | None:
    for message in (
        {"jsonrpc": "2.0", "method": "notifications/x-rcpcheck", "params": {"a": 1}},
        {"jsonrpc": "2.0", "method": "ping"},
        {"jsonrpc": "2.0", "method": "rcpcheck/undefined", "params": {}},
    ):
        exchange = await ctx.send(message, replies=0)
        if exchange.replies:
            raise Failed(
                f"{message['method']} (no id) was answered: {describe(exchange.replies[0])}"
            )
    return None


async def cancel_unknown(ctx: Context) -> str | None:
    answered = ctx.new_id()
    await ctx.call("ping", {}, id=answered)
    for target in ("rcpcheck-never-sent", answered):
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancel", "params": {"id": target}}
        exchange = await ctx.send(cancel, replies=0)
        if exchange.replies:
            raise Failed(f"cancel of {target!r} was answered: {describe(exchange.replies[0])}")
    await ctx.result("ping")
    return None


async def cancel_with_id(ctx: Context) -> str | None:
    reply = await ctx.call("notifications/cancel", {"id": "rcpcheck-other"})
    if "error" not in reply:
        raise Failed(f"a notification carrying an id must be refused: {describe(reply)}")
    return None


async def cancel_in_flight(ctx: Context) -> str | None:
    if ctx.peer.transport == "http":
        raise Skipped("over HTTP a request and its cancel cannot share one exchange")
    probe = ctx.probe()
    id = ctx.new_id()
    message = {"jsonrpc": "2.0", "id": id, "method": probe.method, "params": probe.valid}
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancel", "params": {"id": id}}
    try:
        exchange = await ctx.send(
            json.dumps(message).encode() + b"\n" + json.dumps(cancel).encode()
        )
    except Failed as failure:
        raise Failed(f"a request cancelled as it arrived was never answered ({failure})") from None
    answer = exchange.only()
    if not same_id(answer.get("id"), id):
        raise Failed(f"expected the answer to {id!r}, got {describe(answer)}")
    if "error" in answer:
        expect_error(answer, {-32006}, "a cancelled request")
    late = await ctx.send({"jsonrpc": "2.0", "method": "notifications/x-rcpcheck"}, replies=0)
    if any(same_id(item.get("id"), id) for item in late.replies if isinstance(item, dict)):
        raise Failed("the cancelled request was answered twice")
    return "answered with a result" if "result" in answer else "answered -32006"


async def pipelining(ctx: Context) -> str | None:
    ids = [f"rcpcheck-pipe-{n}" for n in range(5)]
    if ctx.peer.transport == "http":
        raise Skipped("HTTP exchanges are one request each")
    lines = b"\n".join(_message(id, "ping", {"nonce": id}) for id in ids)
    exchange = await ctx.send(lines, replies=len(ids))
    seen = {reply.get("id"): reply for reply in exchange.replies if isinstance(reply, dict)}
    for id in ids:
        result = seen.get(id, {}).get("result")
        if not isinstance(result, dict) or result.get("nonce") != id:
            raise Failed(f"pipelined ping {id!r} was not answered with its nonce")
    return None


async def unknown_fields(ctx: Context) -> str | None:
    params = {"nonce": "u", "x-rcpcheck-unknown": {"a": 1}, "_meta": {"x-rcpcheck": [1, 2]}}
    result = await ctx.result("ping", params)
    if not isinstance(result, dict) or result.get("nonce") != "u":
        raise Failed("ping with unknown fields did not echo its nonce")
    probe = ctx.probe()
    extra = {**probe.valid, "x-rcpcheck-unknown": True, "_meta": {"x-rcpcheck-trace": "t"}}
    await ctx.result(probe.method, extra)
    return None


async def null_is_absent(ctx: Context) -> str | None:
    await ctx.result("ping", {"nonce": None})
    if ctx.has("retrieve"):
        await ctx.result("retrieve", {"query": ctx.query, "k": 2, "mode": None, "filter": None})
    return None


def _needs(key: str) -> Any:
    def applies(ctx: Context) -> None:
        ctx.require(key)

    return applies


async def embed_vectors(ctx: Context) -> str | None:
    dimension = ctx.cap("embed").get("dimension")
    for field in ("inputs", "texts"):  # §7.3: `texts` is the legacy synonym
        result = await ctx.result("embed", {field: ["alpha", "beta"]})
        vectors = result.get("vectors") if isinstance(result, dict) else None
        if not isinstance(vectors, list) or len(vectors) != 2:
            raise Failed(f"embed ({field}) must return one vector per input")
        for vector in vectors:
            if not isinstance(vector, list) or len(vector) != dimension:
                raise Failed(f"a vector is not of the advertised dimension {dimension}")
    return f"dimension {dimension}"


def _l0(id: str, title: str, section: str, run: Any, applies: Any = None) -> Check:
    return Check(id, "L0", title, section, run, applies)


SESSION = [
    _l0("unknown-method", "an undefined method is -32004", "§7, §12", unknown_method),
    _l0(
        "capability-missing",
        "an unadvertised capability's method is -32003",
        "§7, §12",
        capability_missing,
    ),
    _l0(
        "option-unsupported",
        "an unadvertised option of an advertised method is -32005",
        "§7.7, §12",
        option_unsupported,
    ),
    _l0("ids-echoed", "request ids are echoed unchanged (type and value)", "§4.7", ids_echoed),
    _l0("invalid-params", "malformed params are -32602, not a crash", "§12", invalid_params),
    _l0("positional-params", "array params are refused", "§4.1", positional_params),
    _l0("parse-error", "invalid JSON is -32700 with id null", "§12", parse_error),
    _l0("invalid-request", "a frame that is not a request is -32600", "§12", invalid_request),
    _l0(
        "notifications-unanswered",
        "notifications are never answered",
        "§4.5",
        notifications_unanswered,
    ),
    _l0(
        "cancel-unknown",
        "notifications/cancel of an unknown or answered id is a no-op",
        "§7.14",
        cancel_unknown,
    ),
    _l0(
        "cancel-with-id",
        "notifications/cancel carrying an id is refused",
        "§7.14, App. E",
        cancel_with_id,
    ),
    _l0(
        "cancel-in-flight",
        "a cancelled request is answered exactly once (result or -32006)",
        "§7.14",
        cancel_in_flight,
    ),
    _l0("pipelining", "pipelined requests are answered by id", "§4.7", pipelining),
    _l0("unknown-fields", "unknown fields and _meta are ignored", "§4.6, §6.2", unknown_fields),
    _l0("null-is-absent", "an explicit null is treated as absent", "§4.6", null_is_absent),
    _l0(
        "embed-vectors",
        "embed returns one vector per input of the advertised dimension",
        "§7.3",
        embed_vectors,
        _needs("embed"),
    ),
]
