"""The handshake, on a fresh session, in order (§7.1, §7.2, §7.15, §13, §14.1 items 1–3)."""

from __future__ import annotations

from typing import Any

from rcpkit.check.context import Context, describe, expect_error
from rcpkit.check.model import LEVELS, Check, Failed, Skipped

__all__ = ["HANDSHAKE"]

RETRIEVAL_KEYS = ("embed", "rerank", "retrieve", "graph")


def _identity(result: Any, what: str) -> dict[str, Any]:
    if not isinstance(result, dict):
        raise Failed(f"{what} result is not an object")
    version = result.get("protocolVersion")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise Failed(f"{what}: protocolVersion must be an integer >= 1, got {version!r}")
    server = result.get("server")
    if not (
        isinstance(server, dict)
        and isinstance(server.get("name"), str)
        and isinstance(server.get("version"), str)
    ):
        raise Failed(f"{what}: `server` needs a string name and version, got {server!r:.80}")
    if not isinstance(result.get("capabilities"), dict):
        raise Failed(f"{what}: `capabilities` is not an object")
    return result


async def info_before_initialize(ctx: Context) -> str | None:
    ctx.info_before = _identity(await ctx.result("info"), "info")
    server = ctx.info_before["server"]
    return f"{server['name']} {server['version']}"


async def ping_before_initialize(ctx: Context) -> str | None:
    for nonce in ("rcpcheck-nonce", 42):
        result = await ctx.result("ping", {"nonce": nonce})
        echoed = result.get("nonce") if isinstance(result, dict) else None
        if type(echoed) is not type(nonce) or echoed != nonce:
            raise Failed(f"ping nonce {nonce!r} came back as {echoed!r}")
    if not isinstance(await ctx.result("ping"), dict):
        raise Failed("ping without a nonce must answer an object")
    return None


async def gated_before_initialize(ctx: Context) -> str | None:
    probe = ctx.probe()
    reply = await ctx.call(probe.method, probe.valid)
    if "result" in reply and ctx.peer.transport == "http":
        ctx.stateless = True
        raise Skipped("stateless HTTP: every request is implicitly initialized (§5.2)")
    expect_error(reply, {-32001}, f"{probe.method} before initialize")
    return f"{probe.method} → -32001"


async def failed_negotiation(ctx: Context) -> str | None:
    reply = await ctx.call("initialize", {"protocolVersion": 0})
    expect_error(reply, {-32002}, "initialize with protocolVersion 0")
    if ctx.stateless:
        return "-32002 (stateless HTTP: no session to leave uninitialized)"
    probe = ctx.probe()
    after = await ctx.call(probe.method, probe.valid)
    expect_error(after, {-32001}, f"{probe.method} after a failed initialize")
    return None


async def initialize(ctx: Context) -> str | None:
    params = {
        "protocolVersion": 2,  # newer than RCP/1: the server must negotiate down (§7.1)
        "client": {"name": "rcpkit-check", "version": "1", "x-rcpcheck-extra": True},
        "capabilities": {"streaming": {}, "x-rcpcheck": {"probe": True}},
        "_meta": {"x-rcpcheck": {"unknown": "meta"}},
    }
    reply = await ctx.call("initialize", params)
    if "result" not in reply:
        raise Failed(f"initialize failed: {describe(reply)}")
    result = _identity(reply["result"], "initialize")
    if result["protocolVersion"] > 2:
        raise Failed(f"negotiated {result['protocolVersion']}, above the client's 2")
    ctx.init = result
    return f"negotiated protocolVersion {result['protocolVersion']}"


async def retrieval_capability(ctx: Context) -> str | None:
    found = [key for key in RETRIEVAL_KEYS if ctx.has(key)]
    if not found:
        raise Failed(f"none of {', '.join(RETRIEVAL_KEYS)} is advertised")
    return ", ".join(found)


async def declares_conformance(ctx: Context) -> str | None:
    assert ctx.init is not None
    levels = []
    for source in (ctx.init, ctx.info_before or {}):
        meta = source.get("_meta")
        levels.append(meta.get("conformance") if isinstance(meta, dict) else None)
    declared = levels[0] if levels[0] is not None else levels[1]
    ctx.declared = declared if isinstance(declared, str) else None
    if declared not in LEVELS:
        raise Failed(f"_meta.conformance is {declared!r}, not one of {', '.join(LEVELS)}")
    return f"declared {declared}"


async def info_after_initialize(ctx: Context) -> str | None:
    assert ctx.init is not None
    info = _identity(await ctx.result("info"), "info")
    if info["capabilities"] != ctx.init["capabilities"]:
        raise Failed("info reports a different capability set than initialize (§13.2)")
    return None


async def second_initialize(ctx: Context) -> str | None:
    if ctx.stateless:
        raise Skipped("stateless HTTP answers initialize idempotently (§5.2)")
    reply = await ctx.call("initialize", {"protocolVersion": 1})
    expect_error(reply, {-32600}, "a second initialize")
    return None


def _check(id: str, title: str, section: str, run: Any) -> Check:
    return Check(id, "L0", title, section, run, needs_init=False)


HANDSHAKE = [
    _check("info-before-init", "info answers before initialize", "§7.2", info_before_initialize),
    _check(
        "ping-before-init",
        "ping answers before initialize and echoes its nonce",
        "§7.15",
        ping_before_initialize,
    ),
    _check(
        "gated-before-init",
        "a gated method before initialize is -32001",
        "§13",
        gated_before_initialize,
    ),
    _check(
        "failed-negotiation",
        "a failed negotiation (-32002) leaves the session uninitialized",
        "§7.1, §13",
        failed_negotiation,
    ),
    _check(
        "initialize",
        "initialize negotiates a version >= 1 and tolerates unknown fields",
        "§7.1, §14.1",
        initialize,
    ),
    Check(
        "retrieval-capability",
        "L0",
        "advertises a retrieval capability",
        "§14.1",
        retrieval_capability,
    ),
    Check(
        "declares-conformance",
        "L0",
        "declares _meta.conformance",
        "§14",
        declares_conformance,
    ),
    Check(
        "info-after-init",
        "L0",
        "info after initialize reports the same capabilities",
        "§13.2",
        info_after_initialize,
    ),
    Check(
        "second-initialize",
        "L0",
        "a second initialize is -32600",
        "§13",
        second_initialize,
    ),
]
