"""The aggregating gateway (§7.13, §16): one RCP server in front of a registry's engines."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rcpkit.gateway.capabilities import filter_capability, graph_capability, retrieve_capability
    from rcpkit.gateway.command import add_arguments, default_identity, run
    from rcpkit.gateway.server import GatewayServer, build_gateway

# Imported on first use: the CLI declares this package's options (``options``)
# at every start-up, and the rest pulls in the client and more.
_HOMES = {
    "filter_capability": "capabilities",
    "graph_capability": "capabilities",
    "retrieve_capability": "capabilities",
    "add_arguments": "command",
    "default_identity": "command",
    "run": "command",
    "GatewayServer": "server",
    "build_gateway": "server",
}

__all__ = [
    "GatewayServer",
    "add_arguments",
    "build_gateway",
    "default_identity",
    "filter_capability",
    "graph_capability",
    "retrieve_capability",
    "run",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
