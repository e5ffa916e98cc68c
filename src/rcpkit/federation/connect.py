"""Connecting to a registry engine: one place, shared by the Selector and the Federation."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence

from rcpkit.client.client import Client
from rcpkit.client.retry import RetryPolicy
from rcpkit.federation.hops import FEDERATION_PATH_ENV
from rcpkit.federation.registry import EngineSpec

__all__ = ["Connector", "connect_engine"]

Connector = Callable[[EngineSpec], Awaitable[Client]]

# A federated call has its own per-engine deadline; one quick retry of a
# transient failure fits in it, more would only eat the budget.
ENGINE_RETRY = RetryPolicy(attempts=2, base_delay=0.02, max_delay=0.2)


async def connect_engine(
    spec: EngineSpec,
    *,
    connect_timeout: float = 10.0,
    timeout: float | None = 60.0,
    retry: RetryPolicy | None = ENGINE_RETRY,
    federation_path: Sequence[str] = (),
) -> Client:
    """Spawn or reach ``spec`` and run ``initialize``, bounded by ``connect_timeout``."""
    extra = {FEDERATION_PATH_ENV: json.dumps(list(federation_path))} if federation_path else None
    endpoint = spec.endpoint(extra_env=extra)
    return await Client.connect(
        endpoint, timeout=spec.timeout or timeout, connect_timeout=connect_timeout, retry=retry
    )
