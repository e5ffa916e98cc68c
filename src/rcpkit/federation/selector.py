"""The Selector: exactly one engine per query, chosen from the registry (§16.1).

>>> selector = Selector.load("rcp.json")          # no connection yet
>>> client = await selector.select_capable("retrieve")

Connections are lazy: nothing is spawned or dialled until a ``select_*``
call, and then only the engines it has to try. A cached connection is
re-checked with ``ping`` (§7.15) before it is handed out again; a dead one
is dropped and the next engine in priority order is tried. An engine that
failed is passed over by ``select_primary``/``select_capable`` for
``retry_dead_after`` seconds (then tried again, and preferred again if it
answers); ``select(id)`` always tries the engine it names.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

from rcpkit.client.client import DEFAULT_CONNECT_TIMEOUT, Client
from rcpkit.federation.connect import Connector, connect_engine
from rcpkit.federation.registry import EngineSpec, Registry, load_registry
from rcpkit.protocol.errors import ErrorCode, RCPError

__all__ = ["NoLiveEngine", "Selector", "UnknownEngine"]


class UnknownEngine(LookupError):
    """``select(id)`` named an id the registry does not list."""

    def __init__(self, id: str, known: list[str]) -> None:
        super().__init__(f"no engine with id {id!r} in the registry (known: {', '.join(known)})")
        self.id = id


class NoLiveEngine(RCPError):
    """No engine in the registry answered (or none that advertises the capability)."""

    def __init__(self, wanted: str, attempts: dict[str, str]) -> None:
        tried = "; ".join(f"{id}: {why}" for id, why in attempts.items()) or "the registry is empty"
        super().__init__(
            ErrorCode.BACKEND_UNAVAILABLE,
            f"no live engine {wanted} ({tried})",
            extra={"tried": attempts},
        )


class Selector:
    """Priority order plus liveness failover over one registry."""

    def __init__(
        self,
        registry: Registry,
        *,
        connector: Connector | None = None,
        ping_timeout: float = 2.0,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        retry_dead_after: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.registry = registry
        self._connector = connector or (
            lambda spec: connect_engine(spec, connect_timeout=connect_timeout)
        )
        self._ping_timeout = ping_timeout
        self._retry_dead_after = retry_dead_after
        self._clock = clock
        self._dead: dict[str, tuple[float, RCPError]] = {}
        self._clients: dict[str, Client] = {}
        self._locks: dict[str, asyncio.Lock] = {
            spec.id: asyncio.Lock() for spec in registry.engines
        }

    @classmethod
    def load(cls, path: str | Path, **options: Any) -> Selector:
        return cls(load_registry(path), **options)

    @property
    def connected(self) -> list[str]:
        """Ids of the engines with an open connection (lazy: empty until a select)."""
        return [id for id, client in self._clients.items() if not client.closed]

    async def select(self, id: str) -> Client:
        """The engine with this id (connected now if it was not); its error if it is down."""
        spec = self.registry.get(id)
        if spec is None:
            raise UnknownEngine(id, [engine.id for engine in self.registry.engines])
        return await self._live(spec, reconnect=True)

    async def select_primary(self) -> Client:
        """The highest-priority engine that answers."""
        return await self._first(None)

    async def select_capable(self, capability: str) -> Client:
        """The highest-priority live engine advertising ``capability`` (wire key)."""
        return await self._first(capability)

    async def _first(self, capability: str | None) -> Client:
        attempts: dict[str, str] = {}
        for spec in self.registry.by_priority():
            try:
                self._raise_if_cooling(spec.id)
                client = await self._live(spec)
            except RCPError as error:
                attempts[spec.id] = str(error)
                continue
            if capability is None or client.supports(capability):
                return client
            attempts[spec.id] = f"does not advertise `{capability}`"
        wanted = "" if capability is None else f"advertising `{capability}`"
        raise NoLiveEngine(wanted or "in the registry", attempts)

    def _raise_if_cooling(self, id: str) -> None:
        dead = self._dead.get(id)
        if dead is not None and self._clock() - dead[0] < self._retry_dead_after:
            raise dead[1]

    async def _live(self, spec: EngineSpec, *, reconnect: bool = False) -> Client:
        """A live client for ``spec``. A cached one that no longer answers is dropped and,
        unless ``reconnect``, the engine is marked dead so that the caller fails over."""
        async with self._locks[spec.id]:
            client = self._clients.get(spec.id)
            if client is not None:
                if await self._answers(client):
                    return client
                await self._drop(spec.id)
                if not reconnect:
                    self._dead[spec.id] = (self._clock(), _gone(spec.id))
                    raise self._dead[spec.id][1]
            try:
                client = await self._connector(spec)
            except RCPError as error:
                self._dead[spec.id] = (self._clock(), error)
                raise
            self._dead.pop(spec.id, None)
            self._clients[spec.id] = client
            return client

    async def _answers(self, client: Client) -> bool:
        if client.closed:
            return False
        try:
            await client.ping(timeout=self._ping_timeout)
        except RCPError:
            return False
        return True

    async def _drop(self, id: str) -> None:
        client = self._clients.pop(id, None)
        if client is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(client.close(), 5.0)

    async def close(self) -> None:
        """Close every connection the Selector opened."""
        await asyncio.gather(*(self._drop(id) for id in list(self._clients)))

    async def __aenter__(self) -> Selector:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()


def _gone(id: str) -> RCPError:
    return RCPError(ErrorCode.BACKEND_UNAVAILABLE, f"engine {id!r} stopped answering ping")
