"""L2: a writable index (§7.10, §7.11), as the spec authors' harness tags it.

Gated on ``index.writable``: a read-only or absent index skips. Each check
writes one probe document under its own id and deletes it again, so a checked
index ends as it began.
"""

from __future__ import annotations

from typing import Any

from rcpkit.check.context import Context, describe, expect_error
from rcpkit.check.model import Check, Failed, Skipped

__all__ = ["INDEX"]

_CONFLICT = -32016


def _writable(ctx: Context) -> None:
    if ctx.cap("index").get("writable") is not True:
        raise Skipped("the index is not advertised as writable")


def _probe(name: str, text: str) -> dict[str, Any]:
    return {"documents": [{"id": f"rcpcheck-probe-{name}", "text": text}]}


async def _delete(ctx: Context, name: str) -> dict[str, Any]:
    return await ctx.call("index/delete", {"ids": [f"rcpcheck-probe-{name}"]})


async def add_returns_ids(ctx: Context) -> str | None:
    result = await ctx.result("index/add", _probe("ids", "conformance probe document"))
    await _delete(ctx, "ids")
    ids = result.get("ids") if isinstance(result, dict) else None
    if not isinstance(ids, list) or len(ids) != 1:
        raise Failed(f"one positional id per document is required, got {describe(result)}")
    return None


async def add_upserts(ctx: Context) -> str | None:
    await ctx.result("index/add", _probe("upsert", "conformance probe, first text"))
    reply = await ctx.call("index/add", _probe("upsert", "conformance probe, second text"))
    await _delete(ctx, "upsert")
    if "error" in reply:
        expect_error(reply, (_CONFLICT,), "re-adding an id (an upsert, or -32016)")
        return "refused with -32016"
    return None


async def delete_is_idempotent(ctx: Context) -> str | None:
    await ctx.result("index/add", _probe("delete", "conformance probe to delete"))
    first = await _delete(ctx, "delete")
    second = await _delete(ctx, "delete")
    for reply in (first, second):
        if "result" not in reply:
            raise Failed(f"index/delete failed: {describe(reply)}")
    if second["result"].get("deleted") != 0:
        raise Failed(f"a repeated delete must remove 0, got {describe(second)}")
    return None


INDEX = [
    Check(
        "index-add-ids",
        "L2",
        "index/add returns one positional id per document",
        "§7.10",
        add_returns_ids,
        _writable,
    ),
    Check(
        "index-upsert",
        "L2",
        "index/add of an existing id upserts or is refused with -32016",
        "§7.10",
        add_upserts,
        _writable,
    ),
    Check(
        "index-delete-idempotent",
        "L2",
        "index/delete is idempotent (a repeat deletes 0)",
        "§7.11",
        delete_is_idempotent,
        _writable,
    ),
]
