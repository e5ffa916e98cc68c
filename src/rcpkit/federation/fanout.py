"""Fan-out (§16.2): one call to every engine that can take it, concurrently, each on its own
deadline, with loop detection, option gating per engine, and partial-failure accounting."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rcpkit.client.errors import CapabilityMissing, TransportClosed
from rcpkit.client.gating import check_call
from rcpkit.client.options import CallOptions
from rcpkit.federation.engines import EnginePool, EngineState
from rcpkit.federation.fusion import EngineHits
from rcpkit.federation.hops import Hop, downstream_budget
from rcpkit.federation.results import EngineFailure, FederatedResult
from rcpkit.protocol.errors import ErrorCode, RCPError
from rcpkit.protocol.methods import METHODS

__all__ = [
    "Collected",
    "Plan",
    "Progress",
    "assemble",
    "collect",
    "plan_for",
    "raise_if_nothing_answered",
]

log = logging.getLogger("rcpkit.federation")

Progress = Callable[[float, str], None]
Wants = Callable[[Mapping[str, Any]], bool]


@dataclass(slots=True)
class Collected:
    """Per-engine outcomes of one fan-out, in registry order."""

    answers: dict[str, Any] = field(default_factory=dict)
    failures: list[EngineFailure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # gating: engines that cannot serve this call, and why (registry order)
    refusals: list[tuple[str, RCPError]] = field(default_factory=list)
    started: float = field(default_factory=time.perf_counter)

    @property
    def latency_ms(self) -> float:
        return round((time.perf_counter() - self.started) * 1000, 3)


class _Skip(Exception):
    def __init__(self, note: str | None, refusal: RCPError | None = None) -> None:
        super().__init__(note)
        self.note = note
        self.refusal = refusal


@dataclass(frozen=True, slots=True)
class Plan:
    method: str
    wire: dict[str, Any]
    wants: Wants
    hop: Hop
    budget: float | None
    # §17.2: the correlation id every engine receives in `_meta.traceId`.
    trace_id: str | None = None
    # Per-engine additions to the wire params (a fused cursor's pinned indexVersion).
    overrides: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    # The typed result; a malformed answer is that engine's failure, not the query's.
    parse: Callable[[Any], Any] = field(default=lambda raw: raw)


async def collect(
    pool: EnginePool,
    plan: Plan,
    on_progress: Progress | None = None,
) -> Collected:
    """Ask every suitable engine; raise when a required one fails (§16.2)."""
    collected = Collected()
    targets: list[EngineState] = []
    for state in pool.states:
        if state.expanded:
            continue  # its engines are asked directly (§16.1 discovery)
        if state.identity is not None and state.identity in plan.hop.path:
            collected.notes.append(_cycle_note(state))
        elif not state.known or plan.wants(state.capabilities):
            targets.append(state)  # engines known to lack the capability are not asked
    total, done = len(targets), 0

    async def ask(state: EngineState) -> None:
        nonlocal done
        try:
            collected.answers[state.id] = await _ask(pool, state, plan)
            outcome = "answered"
        except _Skip as skip:
            if skip.note:
                collected.notes.append(skip.note)
            if skip.refusal is not None:
                if state.spec.required:
                    raise _required(state, skip.refusal) from None
                collected.refusals.append((state.id, skip.refusal))
            outcome = "skipped"
        except RCPError as error:
            if state.spec.required:
                raise _required(state, error) from None
            collected.failures.append(EngineFailure.of(state.id, error))
            outcome = "failed"
        done += 1
        if on_progress is not None:
            on_progress(done / max(1, total), f"engine '{state.id}' {outcome}")

    try:
        async with asyncio.TaskGroup() as group:
            for state in targets:
                group.create_task(ask(state))
    except* RCPError as failed:  # a required engine failed: the others are cancelled
        raise failed.exceptions[0] from None
    order = {state.id: index for index, state in enumerate(pool.states)}
    collected.failures.sort(key=lambda failure: order[failure.engine])
    collected.refusals.sort(key=lambda refusal: order[refusal[0]])
    collected.answers = dict(sorted(collected.answers.items(), key=lambda item: order[item[0]]))
    return collected


async def _ask(pool: EnginePool, state: EngineState, plan: Plan) -> Any:
    started = time.monotonic()
    # A demoted (consistently slow) engine gets a short timeout, not the whole budget.
    budget = plan.budget if state.health is None else state.health.timeout(plan.budget)
    client = await pool.ensure(state, budget)
    if state.identity is not None and state.identity in plan.hop.path:
        raise _Skip(_cycle_note(state))  # learned on this (re)connect
    if not plan.wants(state.capabilities):
        raise _Skip(None)
    try:
        given = {**plan.wire, **plan.overrides.get(state.id, {})}
        wire = check_call(plan.method, given, client.raw_capabilities)
    except RCPError as refusal:
        raise _Skip(f"engine '{state.id}' skipped: {refusal.message}", refusal) from None
    remaining = None if budget is None else budget - (time.monotonic() - started)
    if remaining is not None and remaining <= 0:
        raise RCPError(ErrorCode.TIMEOUT, "no time left after connecting")
    meta: dict[str, Any] = {"federation": plan.hop.to_wire()}
    if plan.trace_id is not None:
        meta["traceId"] = plan.trace_id
    options = CallOptions(timeout=remaining, meta=meta)
    called = time.monotonic()
    try:
        answer = plan.parse(await client.call(plan.method, wire, options, gate=False))
    except TransportClosed as error:
        pool.observe(state, plan.method, time.monotonic() - called, int(error.code))
        pool.mark_down(state, error)
        raise
    except RCPError as error:
        pool.observe(state, plan.method, time.monotonic() - called, int(error.code))
        if error.code == ErrorCode.TIMEOUT and budget is not None:
            # The engine met the deadline it was sent before our own timer fired
            # (§13.1): the note still says what it was given (a demoted engine: less).
            raise RCPError(error.code, f"{error.message} (its timeout {budget:.3g} s)") from None
        raise
    except Exception as error:  # a bug of ours must not take the other engines down
        log.exception("federated %s to %s failed", plan.method, state.id)
        raise RCPError(ErrorCode.INTERNAL_ERROR, f"internal error: {error}") from None
    pool.observe(state, plan.method, time.monotonic() - called, 0)
    return answer


def _cycle_note(state: EngineState) -> str:
    return (
        f"engine '{state.id}' skipped: federation cycle "
        f"(its identity {state.identity!r} is already in the path, §16.2)"
    )


def _required(state: EngineState, error: RCPError) -> RCPError:
    # §16.2: a required engine's failure fails the whole query with that engine's code.
    return RCPError(
        error.code,
        f"required engine '{state.id}' failed: {error.message}",
        retry_after_ms=error.retry_after_ms,
        extra={"engine": state.id},
    )


def plan_for(
    method: str,
    wire: dict[str, Any],
    wants: Wants,
    hop: Hop,
    remaining: float | None,
    engine_timeout: float | None,
    parse: Callable[[Any], Any],
    trace_id: str | None = None,
) -> Plan:
    budget = downstream_budget(remaining, engine_timeout)
    if budget is not None and budget <= 0:
        raise RCPError(ErrorCode.TIMEOUT, "the deadline leaves no time to ask any engine")
    return Plan(method, wire, wants, hop, budget, trace_id, parse=parse)


def raise_if_nothing_answered(
    method: str, collected: Collected, states: list[EngineState], wants: Any
) -> None:
    """§16.2: every engine failed (-32010), or none could take the call (its refusal)."""
    if collected.failures:
        # §16.2: "no results" and "nothing answered" must be distinguishable.
        detail = "; ".join(failure.note() for failure in collected.failures)
        raise RCPError(
            ErrorCode.BACKEND_UNAVAILABLE,
            f"every engine failed: {detail}",
            retryable=True,
            extra={"engines": [failure.to_wire() for failure in collected.failures]},
        )
    if collected.refusals:
        raise collected.refusals[0][1]  # no engine supports the requested option
    capable = any(state.known and wants(state.capabilities) for state in states)
    if not capable and not collected.notes:
        raise CapabilityMissing(method, METHODS[method].capability or method)


def assemble(
    collected: Collected,
    lists: list[EngineHits],
    hits: list[Any],
    fusion_notes: list[str],
    method: str | None,
) -> FederatedResult:
    """The federated result: the fused hits and every note on who did what."""
    notes = [*collected.notes, *(failure.note() for failure in collected.failures), *fusion_notes]
    for item in lists:
        if item.usage is not None and item.usage.notes:
            notes.extend(f"engine '{item.engine}': {note}" for note in item.usage.notes)
    return FederatedResult(
        hits=hits,
        answered=tuple(collected.answers),
        failures=tuple(collected.failures),
        notes=tuple(notes),
        candidates=sum(len(item.hits) for item in lists),
        latency_ms=collected.latency_ms,
        fusion=method,
    )
