"""What the bridge fronts: one RCP engine through rcpkit's client, or a whole registry.

Both present the same small surface: the engine's advertised capabilities
(wire shape, fixed after ``initialize``, §13.2) and ``call(method, params)``
returning the wire result. Deadlines travel as ``_meta.deadlineMs`` (the
client derives it from ``timeout``, §13.1); progress frames come back
through ``on_progress``; cancelling the awaiting task sends
``notifications/cancel`` (§7.14).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import msgspec

from rcpkit.client import CallOptions, Client
from rcpkit.federation import Federation
from rcpkit.integrations._connect import DEFAULT_PASS_ENV
from rcpkit.protocol import messages as m
from rcpkit.protocol.errors import RCPError

__all__ = [
    "Backend",
    "ClientBackend",
    "FederationBackend",
    "ProgressSink",
    "Source",
    "open_backend",
]

# (fraction in [0, 1], a short human label or None)
ProgressSink = Callable[[float, str | None], None]


class Backend(Protocol):
    name: str
    capabilities: Mapping[str, Any]

    async def call(
        self,
        method: str,
        params: dict[str, Any],
        *,
        timeout: float | None,
        on_progress: ProgressSink | None,
    ) -> dict[str, Any]: ...

    async def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Source:
    """Where the engine is: exactly one of ``command``, ``url`` or ``registry``."""

    command: tuple[str, ...] = ()
    url: str | None = None
    token: str | None = None
    registry: str | None = None

    def describe(self) -> str:
        if self.registry is not None:
            return f"registry {self.registry}"
        return self.url or " ".join(self.command)


class ClientBackend:
    """One engine behind an rcpkit :class:`Client`."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.name = client.server.name or "rcp"
        self.capabilities: Mapping[str, Any] = client.raw_capabilities

    async def call(
        self,
        method: str,
        params: dict[str, Any],
        *,
        timeout: float | None,
        on_progress: ProgressSink | None,
    ) -> dict[str, Any]:
        def progress(frame: m.ProgressParams) -> None:
            if on_progress is not None and frame.progress is not None:
                on_progress(frame.progress, _label(frame.stage, frame.message))

        options = CallOptions(timeout=timeout, on_progress=progress if on_progress else None)
        result = await self.client.call(method, params, options)
        return result if isinstance(result, dict) else {}

    async def close(self) -> None:
        await self.client.close()


class FederationBackend:
    """Every engine of an ``rcp.json`` registry, fanned out and fused (§16)."""

    def __init__(self, federation: Federation) -> None:
        from rcpkit.gateway.capabilities import (
            cites,
            filter_capability,
            graph_capability,
            retrieve_capability,
        )

        self.federation = federation
        self.name = "rcp-federation"
        members = [state.capabilities for state in federation.engines if state.known]
        derived: dict[str, Any] = {
            "retrieve": retrieve_capability(members),
            "graph": graph_capability(members),
            "filter": filter_capability(members),
        }
        self.capabilities: Mapping[str, Any] = {
            key: msgspec.to_builtins(value) for key, value in derived.items() if value is not None
        }
        if cites(members):
            self.capabilities = {**self.capabilities, "citations": {}}

    async def call(
        self,
        method: str,
        params: dict[str, Any],
        *,
        timeout: float | None,
        on_progress: ProgressSink | None,
    ) -> dict[str, Any]:
        def progress(fraction: float, message: str) -> None:
            if on_progress is not None:
                on_progress(fraction, message)

        sink = progress if on_progress is not None else None
        if method == "retrieve":
            typed = _convert(m.RetrieveParams, params)
            result = await self.federation.retrieve(typed, deadline=timeout, on_progress=sink)
        elif method == "graph":
            graph = _convert(m.GraphParams, params)
            fields = {
                name: getattr(graph, name)
                for name in graph.__struct_fields__
                if name != "op" and getattr(graph, name) is not None
            }
            result = await self.federation.graph(
                graph.op, deadline=timeout, on_progress=sink, **fields
            )
        else:
            raise RCPError.option_unsupported(method, f"`{method}` is not federated")
        return result.to_wire()

    async def close(self) -> None:
        await self.federation.close()


async def open_backend(source: Source, *, connect_timeout: float = 30.0) -> Backend:
    """Connect (``initialize``) to the engine or registry ``source`` names."""
    if source.registry is not None:
        federation = Federation.load(source.registry, connect_timeout=connect_timeout)
        for failure in await federation.connect():
            # stdout is the MCP channel (stdio); the host shows stderr as the server's log.
            print(f"rcpkit mcp: {failure.note()} (skipped)", file=sys.stderr, flush=True)
        return FederationBackend(federation)
    if source.url is not None:
        client = await Client.connect_http(
            source.url, token=source.token, connect_timeout=connect_timeout
        )
    else:
        client = await Client.connect_stdio(
            list(source.command), pass_env=DEFAULT_PASS_ENV, connect_timeout=connect_timeout
        )
    return ClientBackend(client)


def _label(stage: str | None, message: str | None) -> str | None:
    """``stage: message``, the stage once even when a server's message names it too."""
    if stage and message and message.split(maxsplit=1)[0].rstrip(":") == stage:
        return message
    parts = [part for part in (stage, message) if part]
    return ": ".join(parts) or None


def _convert(kind: type[Any], params: Mapping[str, Any]) -> Any:
    try:
        return msgspec.convert(dict(params), kind, strict=False)
    except msgspec.ValidationError as error:
        raise RCPError.invalid_params("arguments", f"invalid arguments: {error}") from None
