"""Methods one engine answers, routed through the federation (§16.1 Selector rules).

``embed``, ``embed/*``, ``rerank``, ``query/transform``, ``feedback`` and
``memory/*`` go to the highest-priority live engine advertising the method's
capability; when it is down or times out, the next engine that advertises
*exactly the same* capability metadata takes the call (so an ``embed`` never
silently changes embedding space, §15.7). Writes (``index/add``,
``index/delete``, ``memory/build``) are never failed over: they go to the engine
named in ``_meta.engine``, else to the registry engine marked ``"write": true``,
else to the highest-priority live engine that takes them (as
``Selector.select_capable`` picks): a plain write works wherever ``index`` is
advertised. Any call may name its engine in ``_meta.engine``.

An engine whose capability metadata does not match the spec's shape for that key
is not a candidate for the method (its metadata cannot be advertised, §6), and a
``rerank`` answer without one score per passage is that engine's failure (§7.6):
the next engine that advertises ``rerank`` takes the call.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import msgspec

from rcpkit.client.errors import CapabilityMissing, TransportClosed
from rcpkit.client.gating import check_call
from rcpkit.client.options import CallOptions
from rcpkit.federation.engines import EnginePool, EngineState
from rcpkit.federation.hops import Hop
from rcpkit.protocol.capabilities import Capabilities
from rcpkit.protocol.errors import ErrorCode, RCPError
from rcpkit.protocol.messages import RerankParams
from rcpkit.protocol.methods import METHODS
from rcpkit.protocol.validation import parse_params

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
    found = [state for state in states if key in state.capabilities and _well_formed(state, key)]
    if method in ("index/add", "index/delete"):
        found = [state for state in found if _writable(state)]
    return sorted(found, key=lambda state: -state.spec.priority)


def write_target(states: list[EngineState], method: str = "index/add") -> EngineState | None:
    """Where a write that names no engine goes: the registry's ``"write": true`` engine
    if it can take writes, else the highest-priority live engine that can (ties:
    registry order), else the highest-priority one that could once reconnected."""
    writable = capable(states, method)
    marked = next((state for state in writable if state.spec.write), None)
    live = next((state for state in writable if state.live), None)
    return marked or live or next(iter(writable), None)


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
    if method == "rerank" and isinstance(wire.get("method"), str) and engine is None:
        # §7.6: `method` must be one the engine lists; fail over only to such engines.
        wanted = wire["method"]
        candidates = [s for s in candidates if wanted in _listed(s, "rerank", "methods")] or (
            candidates[:1]
        )
    tried: list[str] = []
    last: RCPError | None = None
    for state in candidates:
        try:
            result = await _call(pool, state, method, wire, hop, budget, trace_id)
            _check_answer(method, wire, result)
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
        target = write_target(found, method)
        if target is None:
            raise CapabilityMissing(method, spec.capability or method)
        return [target]  # a write is never failed over to another index
    if not found:
        raise CapabilityMissing(method, spec.capability or method)
    key = spec.capability or method
    if method == "rerank":
        return found  # scores are per request: any reranker answers the same question
    primary = found[0].capabilities.get(key)
    return [state for state in found if state.capabilities.get(key) == primary]


def _check_answer(method: str, wire: dict[str, Any], result: Any) -> None:
    """§7.6: ``scores[i]`` is ``passages[i]``'s; any other rerank answer is no answer.

    The passages are read as the engine reads them (``RerankParams.items``: ``passages``,
    or the reference SDK's ``documents``), so the two never count different lists
    (issue 52: a ``documents`` rerank was failed over for want of ``passages``).
    """
    if method != "rerank":
        return
    passages = parse_params(RerankParams, wire).items
    scores = result.get("scores") if isinstance(result, dict) else None
    if (
        not isinstance(scores, list)
        or len(scores) != len(passages)
        or not all(isinstance(s, int | float) and not isinstance(s, bool) for s in scores)
    ):
        given = sorted(result) if isinstance(result, dict) else type(result).__name__
        raise RCPError(
            ErrorCode.BACKEND_UNAVAILABLE,
            f"its rerank answer has no `scores` aligned with the passages (it sent {given})",
        )


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


def _listed(state: EngineState, key: str, field: str) -> list[Any]:
    value = state.capabilities.get(key)
    listed = value.get(field) if isinstance(value, dict) else None
    return listed if isinstance(listed, list) else []


def _well_formed(state: EngineState, key: str) -> bool:
    try:
        msgspec.convert({key: state.capabilities[key]}, Capabilities)
    except msgspec.ValidationError:
        return False
    return True


def _writable(state: EngineState) -> bool:
    index = state.capabilities.get("index")
    return isinstance(index, dict) and bool(index.get("writable"))
