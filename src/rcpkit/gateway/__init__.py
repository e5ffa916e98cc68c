"""The aggregating gateway (§7.13, §16): one RCP server in front of a registry's engines."""

from rcpkit.gateway.capabilities import filter_capability, graph_capability, retrieve_capability
from rcpkit.gateway.command import add_arguments, default_identity, run
from rcpkit.gateway.server import GatewayServer, build_gateway

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
