"""Running every check against one server, restarting it if a probe killed it (§14.5)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from rcpkit.check.checks_batch import BATCH, FINAL
from rcpkit.check.checks_handshake import HANDSHAKE, initialize
from rcpkit.check.checks_index import INDEX
from rcpkit.check.checks_retrieve import RETRIEVE
from rcpkit.check.checks_session import SESSION
from rcpkit.check.checks_sota import SOTA
from rcpkit.check.context import Context
from rcpkit.check.failures import Gone
from rcpkit.check.levels import requirements
from rcpkit.check.model import Check, Failed, Outcome, Report, Skipped
from rcpkit.check.peer import Peer

__all__ = ["ALL_CHECKS", "run_checks"]

log = logging.getLogger("rcpkit.check")

# A server that dies this often is unavailable; the remaining checks fail without it.
MAX_RESTARTS = 3

ALL_CHECKS: list[Check] = [*HANDSHAKE, *SESSION, *BATCH, *RETRIEVE, *SOTA, *INDEX, *FINAL]

PeerFactory = Callable[[], Awaitable[Peer]]


async def run_checks(
    open_peer: PeerFactory, *, query: str = "retrieval", timeout: float = 10.0
) -> Report:
    """Every check, in order, on one session; a fresh session after a crash.

    A server that is gone before answering anything, or whose ``initialize``
    fails, is not run through the checks that need it: the report says why
    it stopped (``Report.stopped``) with the server's last stderr lines.
    """
    peer = await open_peer()
    report = Report(peer.target, peer.transport)
    ctx = Context(peer, query=query, timeout=timeout)
    try:
        report.stopped = await _unreachable(ctx)
        if report.stopped is None:
            await _run_all(ctx, open_peer, report)
    finally:
        await ctx.peer.close()
        if report.stopped is not None:
            report.stderr_tail = ctx.peer.stderr_tail
    report.declared = ctx.declared
    if report.stopped is None:
        report.requirements = requirements(ctx.capabilities)
    if ctx.init is not None:
        report.server = dict(ctx.init.get("server") or {})
    return report


async def _run_all(ctx: Context, open_peer: PeerFactory, report: Report) -> None:
    restarts = 0
    for position, check in enumerate(ALL_CHECKS):
        left = len(ALL_CHECKS) - position
        if restarts > MAX_RESTARTS:
            report.stopped = (
                f"the server stopped answering {MAX_RESTARTS + 1} times: "
                f"the last {left} checks were not run"
            )
            return
        if check.needs_init and ctx.init is None:
            report.stopped = _no_session(report, left)
            return
        report.outcomes.append(await _run(check, ctx))
        if check.id != "shutdown" and not await _alive(ctx):
            restarts += 1
            if restarts <= MAX_RESTARTS:
                await _restart(ctx, open_peer, report)


async def _unreachable(ctx: Context) -> str | None:
    """Why the server cannot be checked at all (it exited, it refused us), else None."""
    try:
        await ctx.peer.send(
            {"jsonrpc": "2.0", "id": "rcpcheck-reachable", "method": "ping"}, timeout=ctx.timeout
        )
    except Gone as gone:
        return f"no answer to a first ping: {gone}"
    except Failed:
        return None  # slow or silent, but there: the checks say what it does
    return None


def _no_session(report: Report, left: int) -> str:
    # §13: every check after the handshake needs an initialized session.
    first = next((o for o in report.outcomes if o.id == "initialize"), None)
    why = f" ({first.detail})" if first is not None and first.detail else ""
    return f"initialize did not succeed{why}: the {left} checks that need a session were not run"


async def _run(check: Check, ctx: Context) -> Outcome:
    def outcome(status: str, detail: str | None) -> Outcome:
        return Outcome(check.id, check.level, check.title, check.section, status, detail or "")  # type: ignore[arg-type]

    if check.needs_init and ctx.init is None:
        return outcome("FAIL", "initialize did not succeed")
    try:
        if check.applies is not None:
            check.applies(ctx)
        async with asyncio.timeout(ctx.timeout * 3):
            detail = await check.run(ctx)
    except Skipped as skip:
        return outcome("SKIP", str(skip))
    except Failed as failure:
        return outcome("FAIL", str(failure))
    except TimeoutError:
        return outcome("FAIL", "the check did not finish in time")
    except Exception as error:  # a reply shaped so oddly that the check itself tripped
        log.debug("check %s raised", check.id, exc_info=True)
        return outcome("FAIL", f"unexpected reply ({type(error).__name__}: {error})")
    return outcome("PASS", detail)


async def _alive(ctx: Context) -> bool:
    try:
        await ctx.peer.send(
            {"jsonrpc": "2.0", "id": "rcpcheck-alive", "method": "ping"}, timeout=ctx.timeout
        )
    except Failed:
        return False
    return True


async def _restart(ctx: Context, open_peer: PeerFactory, report: Report) -> None:
    """The last probe killed the server (that check already failed): start a new session."""
    violations = ctx.peer.violations
    await ctx.peer.close()
    ctx.peer = await open_peer()
    ctx.peer.violations.extend(violations)
    if ctx.init is not None:
        try:
            await initialize(ctx)
        except Failed:
            ctx.init = None
    report.outcomes.append(
        Outcome(
            "restart",
            "L0",
            "the server stopped answering; restarted",
            "§14.1",
            "FAIL",
            "a probe left the server unable to answer ping",
        )
    )
