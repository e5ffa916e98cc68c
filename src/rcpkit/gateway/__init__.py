"""The aggregating gateway (§7.13, §16): one RCP server in front of a registry's engines."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rcpkit._lazy import lazy_exports

if TYPE_CHECKING:
    from rcpkit.gateway.capabilities import filter_capability, graph_capability, retrieve_capability
    from rcpkit.gateway.command import add_arguments, default_identity, run
    from rcpkit.gateway.server import GatewayServer, build_gateway

# Imported on first use: the CLI declares this package's options (``options``)
# at every start-up, and the rest pulls in the client and more.
__getattr__ = lazy_exports(
    __name__,
    {
        "capabilities": ("filter_capability", "graph_capability", "retrieve_capability"),
        "command": ("add_arguments", "default_identity", "run"),
        "server": ("GatewayServer", "build_gateway"),
    },
)

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
