"""Methods one engine answers, routed through the federation (§16.1 Selector rules).

``embed``, ``embed/*``, ``rerank``, ``query/transform``, ``feedback`` and
``memory/*`` go to the highest-priority live engine advertising the method's
capability; when it is down or times out, the next engine that advertises
*exactly the same* capability metadata takes the call (so an ``embed`` never
silently changes embedding space, §15.7). Writes (``index/add``,
``index/delete``, ``memory/build``) are never failed over: they go to the engine
named in ``_meta.engine``, else to the registry engine marked ``"write": true``.
Any call may name its engine in ``_meta.engine``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from rcpkit.client.errors import CapabilityMissing, TransportClosed
from rcpkit.client.gating import check_call
from rcpkit.client.options import CallOptions
from rcpkit.federation.engines import EnginePool, EngineState
from rcpkit.federation.hops import Hop
from rcpkit.protocol.errors import ErrorCode, RCPError
from rcpkit.protocol.methods import METHODS

__all__ = ["ENGINE_META_KEY", "Routed", "capable", "route_call", "write_target"]

# `_meta.engine`: the registry id of the engine a routed call must go to.
ENGINE_META_KEY = "engine"
# Failures after which the next engine is tried (the caller's own errors are not).
_FAIL_OVER = {ErrorCode.BACKEND_UNAVAILABLE, ErrorCode.TIMEOUT, ErrorCode.RATE_LIMITED}


@dataclass(frozen=True, slots=True)
class Routed:
    engine: str
    result: Any
    tried: tuple[str, ...] = ()


def capable(states: list[EngineState], method: str) -> list[EngineState]:
    """Engines that can take ``method``, highest priority first (ties: registry order)."""
    key = METHODS[method].capability or method
    found = [state for state in states if key in state.capabilities]
    if method in ("index/add", "index/delete"):
        found = [state for state in found if _writable(state)]
    return sorted(found, key=lambda state: -state.spec.priority)


def write_target(states: list[EngineState]) -> EngineState | None:
    """The registry's default write engine (``"write": true``), if it can take writes."""
    return next((s for s in states if s.spec.write and _writable(s)), None)


async def route_call(
    pool: EnginePool,
    members: list[EngineState],
    method: str,
    wire: dict[str, Any],
    *,
    engine: str | None,
    hop: Hop,
    budget: float | None,
    trace_id: str | None,
) -> Routed:
    candidates = _candidates(members, method, engine, hop)
    tried: list[str] = []
    last: RCPError | None = None
    for state in candidates:
        try:
            result = await _call(pool, state, method, wire, hop, budget, trace_id)
        except RCPError as error:
            if error.code not in _FAIL_OVER:
                raise
            tried.append(f"{state.id}: {error.message}")
            last = error
            continue
        return Routed(state.id, result, tuple(tried))
    assert last is not None
    raise RCPError(
        ErrorCode.BACKEND_UNAVAILABLE,
        f"no engine could take `{method}`: {'; '.join(tried)}",
        retryable=True,
        retry_after_ms=last.retry_after_ms,
    )


def _candidates(
    members: list[EngineState], method: str, engine: str | None, hop: Hop
) -> list[EngineState]:
    members = [s for s in members if s.identity is None or s.identity not in hop.path]
    spec = METHODS[method]
    found = capable(members, method)
    if engine is not None:
        named = [state for state in found if state.id == engine]
        if not named:
            known = ", ".join(state.id for state in found) or "none"
            raise RCPError.invalid_params(
                f"_meta.{ENGINE_META_KEY}",
                f"no engine {engine!r} that can take `{method}` (these can: {known})",
            )
        return named
    if spec.writes:
        target = write_target(members)
        if target is None:
            raise RCPError.invalid_params(
                f"_meta.{ENGINE_META_KEY}",
                f"`{method}` is a write: name its engine in _meta.{ENGINE_META_KEY} "
                '(or mark one registry engine "write": true)',
            )
        return [target]  # a write is never failed over to another index
    if not found:
        raise CapabilityMissing(method, spec.capability or method)
    key = spec.capability or method
    primary = found[0].capabilities.get(key)
    return [state for state in found if state.capabilities.get(key) == primary]


async def _call(
    pool: EnginePool,
    state: EngineState,
    method: str,
    wire: dict[str, Any],
    hop: Hop,
    budget: float | None,
    trace_id: str | None,
) -> Any:
    started = time.monotonic()
    budget = budget if state.health is None else state.health.timeout(budget)
    client = await pool.ensure(state, budget)
    params = {key: value for key, value in wire.items() if key != "_meta"}
    checked = check_call(method, params, client.raw_capabilities)
    remaining = None if budget is None else budget - (time.monotonic() - started)
    if remaining is not None and remaining <= 0:
        raise RCPError(ErrorCode.TIMEOUT, "no time left after connecting")
    meta = _forwarded_meta(wire.get("_meta"), hop, trace_id)
    called = time.monotonic()
    try:
        result = await client.call(method, checked, CallOptions(remaining, meta), gate=False)
    except TransportClosed as error:
        pool.observe(state, method, time.monotonic() - called, int(error.code))
        pool.mark_down(state, error)
        raise
    except RCPError as error:
        pool.observe(state, method, time.monotonic() - called, int(error.code))
        raise
    pool.observe(state, method, time.monotonic() - called, 0)
    return result


def _forwarded_meta(given: Any, hop: Hop, trace_id: str | None) -> dict[str, Any]:
    """The caller's ``_meta`` minus what is the gateway's (its deadline, its routing)."""
    meta = {
        key: value
        for key, value in (given.items() if isinstance(given, dict) else ())
        if key not in ("deadlineMs", "federation", "progressToken", ENGINE_META_KEY)
    }
    meta["federation"] = hop.to_wire()
    if trace_id is not None:
        meta["traceId"] = trace_id
    return meta


def _writable(state: EngineState) -> bool:
    index = state.capabilities.get("index")
    return isinstance(index, dict) and bool(index.get("writable"))
