"""The aggregating gateway (§7.13, §16): one RCP server in front of a registry's engines."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rcpkit._lazy import lazy_exports

if TYPE_CHECKING:
    from rcpkit.gateway.capabilities import filter_capability, graph_capability, retrieve_capability
    from rcpkit.gateway.server import GatewayServer, build_gateway, default_identity

# Imported on first use (rcpkit._lazy): importing the package stays cheap, and
# the server pulls in the client and federation.
__getattr__ = lazy_exports(
    __name__,
    {
        "capabilities": ("filter_capability", "graph_capability", "retrieve_capability"),
        "server": ("GatewayServer", "build_gateway", "default_identity"),
    },
)

__all__ = [
    "GatewayServer",
    "build_gateway",
    "default_identity",
    "filter_capability",
    "graph_capability",
    "retrieve_capability",
]
