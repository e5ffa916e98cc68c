"""Dynamic discovery through an aggregator's ``catalog/list`` (§16.1, item 2).

A registry entry marked ``"discover": true`` that turns out to be an
aggregator (it advertises ``catalog``) is *expanded*: the engines its
``catalog/list`` exposes an ``endpoint`` for become engines of this
federation (ids ``<aggregator>/<engine>``), asked directly, and the
aggregator itself is no longer forwarded to (its hits would come twice).
Expansion recurses into discovered aggregators, bounded by the hop depth;
an engine whose identity is ours or already on the path is never expanded
nor asked (§16.2). When some listed engine has no endpoint (hidden), the
aggregator is kept as it is: expanding would lose those engines.

Trust stays with the transport that was configured: a stdio aggregator's
stdio entries are spawned (with the aggregator's ``cwd``, ``env`` and
``passEnv``), an HTTP aggregator's HTTP entries are dialled; a remote
aggregator never makes us spawn a local command.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from typing import Any

from rcpkit.client.options import CallOptions
from rcpkit.federation.engines import EnginePool, EngineState
from rcpkit.federation.hops import Hop
from rcpkit.federation.registry import EngineSpec
from rcpkit.protocol.errors import RCPError

__all__ = ["discover"]

log = logging.getLogger("rcpkit.federation")


async def discover(
    pool: EnginePool, excluded: frozenset[str], hop: Hop, timeout: float
) -> list[str]:
    """Expand every discoverable aggregator in ``pool``; the ids of the engines added."""
    added: list[str] = []
    frontier = [s for s in pool.states if s.spec.discover]
    while frontier and hop.depth > 0:
        found: list[EngineState] = []
        for state in frontier:
            found.extend(await _expand(pool, state, excluded, hop, timeout))
        await pool.connect_states(found)
        added.extend(state.id for state in found)
        frontier = [state for state in found if "catalog" in state.capabilities]
        hop = Hop(hop.depth - 1, hop.path)
    return added


async def _expand(
    pool: EnginePool, state: EngineState, excluded: frozenset[str], hop: Hop, timeout: float
) -> list[EngineState]:
    if state.client is None or "catalog" not in state.capabilities:
        return []
    if state.identity is not None and (state.identity in excluded or state.identity in hop.path):
        return []  # ourselves, or an aggregator already on the path (§16.2)
    options = CallOptions(timeout=timeout, meta={"federation": hop.to_wire()})
    try:
        listed = await state.client.call("catalog/list", {}, options)
    except RCPError as error:
        log.warning("discovery through '%s' failed: %s", state.id, error.message)
        return []
    entries = [entry for entry in listed.get("engines", []) if isinstance(entry, Mapping)]
    specs = [_spec(state.spec, entry) for entry in entries]
    if not entries or any(spec is None for spec in specs):
        return []  # nothing listed, or hidden endpoints: keep asking the aggregator
    known = {_where(s.spec) for s in pool.states}
    fresh = [spec for spec in specs if spec is not None and _where(spec) not in known]
    state.expanded = True
    log.warning(
        "discovered %d engine(s) through '%s': %s",
        len(fresh),
        state.id,
        ", ".join(spec.id for spec in fresh) or "none new",
    )
    return [pool.add(spec) for spec in fresh]


def _spec(via: EngineSpec, entry: Mapping[str, Any]) -> EngineSpec | None:
    endpoint = entry.get("endpoint")
    name = entry.get("id")
    if not isinstance(endpoint, Mapping) or not isinstance(name, str):
        return None
    kind = endpoint.get("transport")
    id = f"{via.id}/{name}"
    if kind == "http" and via.transport == "http" and isinstance(endpoint.get("url"), str):
        return EngineSpec(
            transport="http",
            url=endpoint["url"],
            headers=via.headers,
            token_env=via.token_env,
            id=id,
            weight=via.weight,
            discover=True,
        )
    command = endpoint.get("command")
    if kind == "stdio" and via.transport == "stdio" and isinstance(command, list) and command:
        return dataclasses.replace(
            via,
            command=tuple(str(part) for part in command),
            required=False,
            write=False,
            id=id,
            discover=True,
        )
    return None


def _where(spec: EngineSpec) -> tuple[str, ...]:
    return (spec.url or "",) if spec.transport == "http" else spec.command
