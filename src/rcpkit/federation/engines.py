"""The engines of a federation: their connections, and reconnection after a failure."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rcpkit.client.client import Client
from rcpkit.federation.connect import Connector
from rcpkit.federation.health import EngineHealth, HealthPolicy
from rcpkit.federation.hops import engine_identity
from rcpkit.federation.registry import EngineSpec
from rcpkit.protocol import messages as m
from rcpkit.protocol.errors import ErrorCode, RCPError

__all__ = ["CallObserver", "EnginePool", "EngineState"]

log = logging.getLogger("rcpkit.federation")

# (engine id, method, seconds, RCP code or 0): one call the federation made to an engine.
CallObserver = Callable[[str, str, float, int], None]


@dataclass(slots=True)
class EngineState:
    """One registry engine: its live client, or why it has none."""

    spec: EngineSpec
    client: Client | None = None
    error: RCPError | None = None
    down_since: float | None = None
    # What the last successful initialize said (kept across reconnects, §13.2).
    server: m.PeerInfo | None = None
    capabilities: dict[str, Any] = field(default_factory=dict)
    identity: str | None = None
    health: EngineHealth | None = None
    # An aggregator whose engines were discovered and are asked directly instead.
    expanded: bool = False

    @property
    def id(self) -> str:
        return self.spec.id

    @property
    def live(self) -> bool:
        return self.client is not None and not self.client.closed

    @property
    def known(self) -> bool:
        """Whether the engine ever completed initialize (its capabilities are known)."""
        return self.server is not None


class EnginePool:
    """Connects engines, records their failures, and reconnects after a cool-down."""

    def __init__(
        self,
        engines: list[EngineSpec],
        connector: Connector,
        *,
        connect_timeout: float,
        reconnect_after: float,
        clock: Callable[[], float] = time.monotonic,
        health: HealthPolicy | None = None,
    ) -> None:
        policy = health or HealthPolicy()
        self._policy = policy
        self.states = [EngineState(spec, health=EngineHealth(spec.id, policy)) for spec in engines]
        self.observer: CallObserver | None = None
        self._connector = connector
        self._connect_timeout = connect_timeout
        self._reconnect_after = reconnect_after
        self._clock = clock
        self._locks = {spec.id: asyncio.Lock() for spec in engines}

    async def connect_all(self) -> None:
        """Connect every engine concurrently; failures are recorded on their states."""
        await asyncio.gather(*(self._connect(state, None) for state in self.states))

    def add(self, spec: EngineSpec) -> EngineState:
        """A discovered engine (not connected yet)."""
        state = EngineState(spec, health=EngineHealth(spec.id, self._policy))
        self.states.append(state)
        self._locks[spec.id] = asyncio.Lock()
        return state

    async def connect_states(self, states: list[EngineState]) -> None:
        await asyncio.gather(*(self._connect(state, None) for state in states))

    async def ensure(self, state: EngineState, budget: float | None) -> Client:
        """A live client for ``state`` (reconnecting when the cool-down allows), or its error."""
        if state.client is not None and state.live:
            return state.client
        async with self._locks[state.id]:
            if state.client is not None and state.live:
                return state.client
            if state.client is not None:
                self.mark_down(state, state.error or _gone(state))
            cooling = state.down_since is not None and (
                self._clock() - state.down_since < self._reconnect_after
            )
            if cooling and state.error is not None:
                raise state.error
            await self._connect(state, budget)
        if state.client is None:
            assert state.error is not None
            raise state.error
        return state.client

    async def _connect(self, state: EngineState, budget: float | None) -> None:
        timeout = self._connect_timeout if budget is None else min(budget, self._connect_timeout)
        try:
            async with asyncio.timeout(max(0.001, timeout)):
                client = await self._connector(state.spec)
        except TimeoutError:
            error = RCPError(
                ErrorCode.BACKEND_UNAVAILABLE, f"no initialize answer within {timeout:.3g} s"
            )
            self.mark_down(state, error)
            return
        except RCPError as error:
            self.mark_down(state, error)
            return
        except OSError as error:  # the command does not exist, permission denied, …
            self.mark_down(state, RCPError(ErrorCode.BACKEND_UNAVAILABLE, f"cannot start: {error}"))
            return
        if state.down_since is not None:
            log.warning("engine '%s' recovered (reconnected)", state.id)
        state.client, state.error, state.down_since = client, None, None
        state.server = client.server
        state.capabilities = dict(client.raw_capabilities)
        state.identity = engine_identity(
            client.meta, client.server.name, client.supports("catalog")
        )

    def mark_down(self, state: EngineState, error: RCPError) -> None:
        """Record a failure that leaves the engine without a usable connection."""
        if state.client is not None or state.error is None:  # it was up (or never tried)
            log.warning("engine '%s' down: %s", state.id, error.message)
        state.error = error
        state.down_since = self._clock()
        client, state.client = state.client, None
        if client is not None:
            asyncio.get_running_loop().create_task(_close_quietly(client))

    def observe(self, state: EngineState, method: str, seconds: float, code: int) -> None:
        """Record one call's outcome on the engine's health and tell the observer."""
        health = state.health
        if health is not None:
            if code == 0:
                health.answered(seconds)
            elif code == ErrorCode.TIMEOUT:
                health.timed_out(seconds)
            else:
                health.failed()
        if self.observer is not None:
            self.observer(state.id, method, seconds, code)

    async def close(self) -> None:
        clients = [state.client for state in self.states if state.client is not None]
        for state in self.states:
            state.client = None
        await asyncio.gather(*(_close_quietly(client) for client in clients))


def _gone(state: EngineState) -> RCPError:
    assert state.client is not None
    reason = state.client.connection.lost_reason or "the connection is closed"
    return RCPError(ErrorCode.BACKEND_UNAVAILABLE, f"transport closed: {reason}")


async def _close_quietly(client: Client) -> None:
    with contextlib.suppress(Exception):
        await asyncio.wait_for(client.close(), 5.0)
