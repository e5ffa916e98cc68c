"""JSON-RPC batches (§11), then the checks that close a session (§4, §5.1, §7.12)."""

from __future__ import annotations

from typing import Any

from rcpkit.check.context import Context, describe, expect_error
from rcpkit.check.model import Check, Failed

__all__ = ["BATCH", "FINAL"]


def _ping(id: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "method": "ping", "params": {"nonce": id}}


_NOTE = {"jsonrpc": "2.0", "method": "notifications/x-rcpcheck", "params": {}}


def _array(exchange_reply: Any, what: str) -> list[dict[str, Any]]:
    if not isinstance(exchange_reply, list):
        raise Failed(f"{what}: expected an array, got {describe(exchange_reply)}")
    return [member for member in exchange_reply if isinstance(member, dict)]


async def batch_correlated(ctx: Context) -> str | None:
    reply = (await ctx.send([_ping("rcpcheck-b1"), _NOTE, _ping("rcpcheck-b2")])).only()
    members = _array(reply, "a batch of two requests and a notification")
    ids = sorted(str(member.get("id")) for member in members)
    if ids != ["rcpcheck-b1", "rcpcheck-b2"]:
        raise Failed(f"expected one answer per request (not for the notification), got ids {ids}")
    for member in members:
        if member.get("result", {}).get("nonce") != member.get("id"):
            raise Failed(f"batch answer {member.get('id')!r} does not carry its own result")
    return None


async def batch_empty(ctx: Context) -> str | None:
    reply = (await ctx.send(b"[]")).only()
    if isinstance(reply, list):
        raise Failed("an empty batch must be answered with a single object, not an array")
    expect_error(reply, {-32600}, "an empty batch")
    if reply.get("id") is not None:
        raise Failed(f"the -32600 for an empty batch carries id null, got {reply.get('id')!r}")
    return None


async def batch_notifications_only(ctx: Context) -> str | None:
    exchange = await ctx.send([_NOTE, _NOTE], replies=0)
    if exchange.replies:
        raise Failed(f"a batch of notifications was answered: {describe(exchange.replies[0])}")
    return None


async def batch_invalid_member(ctx: Context) -> str | None:
    reply = (await ctx.send([1, _ping("rcpcheck-b3")])).only()
    members = _array(reply, "a batch with an invalid member")
    errors = [m for m in members if isinstance(m.get("error"), dict)]
    results = [m for m in members if m.get("id") == "rcpcheck-b3" and "result" in m]
    if len(members) != 2 or len(errors) != 1 or len(results) != 1:
        raise Failed(f"expected one -32600 and one ping result, got {describe(reply)}")
    expect_error(errors[0], {-32600}, "the invalid member")
    if errors[0].get("id") is not None:
        raise Failed("the invalid member's error must carry id null")
    return None


async def well_formed(ctx: Context) -> str | None:
    problems = list(dict.fromkeys(ctx.peer.violations))
    if problems:
        raise Failed(
            "; ".join(problems[:3]) + (f" (+{len(problems) - 3} more)" if len(problems) > 3 else "")
        )
    return None


async def shutdown(ctx: Context) -> str | None:
    result = await ctx.result("shutdown", {})
    if not isinstance(result, dict):
        raise Failed(f"shutdown must answer an object, got {result!r:.60}")
    return None


BATCH = [
    Check(
        "batch-correlated",
        "L0",
        "a batch gets one answer per request, none for its notifications",
        "§11",
        batch_correlated,
    ),
    Check("batch-empty", "L0", "an empty batch is one -32600 with id null", "§11", batch_empty),
    Check(
        "batch-notifications",
        "L0",
        "a batch of only notifications gets no answer",
        "§11",
        batch_notifications_only,
    ),
    Check(
        "batch-invalid-member",
        "L0",
        "an invalid batch member is -32600 (id null), the others still run",
        "§11",
        batch_invalid_member,
    ),
]

FINAL = [
    Check(
        "well-formed",
        "L0",
        "every frame was well-formed JSON-RPC 2.0 (stdout carries protocol only)",
        "§4, §5.1",
        well_formed,
    ),
    Check("shutdown", "L0", "shutdown answers {}", "§7.12", shutdown),
]
