"""``rcpkit mcp``: an MCP server (the official ``mcp`` SDK) in front of any RCP engine.

>>> from rcpkit.mcp_bridge import Source, serve_stdio
>>> await serve_stdio(Source(command=("rcpkit", "serve", "--index", "docs-index")))

Tools are derived from what the engine advertises (``retrieve``; ``graph``;
``index_add``/``index_delete`` only with ``writes=True`` and a writable index:
an agent gets tools that change the index only when asked for); results keep
citations and trust visible (§15.2). Needs the ``mcp`` extra.

Documents are not exposed as MCP resources: no RCP/1 method returns a
document by its id (``retrieve`` ranks by a query, ``graph`` returns nodes),
so there is nothing a ``resources/read`` could call faithfully.
"""

from rcpkit.mcp_bridge.backends import (
    Backend,
    ClientBackend,
    FederationBackend,
    Source,
    open_backend,
)
from rcpkit.mcp_bridge.bridge import Bridge, ToolSpec, tools_for
from rcpkit.mcp_bridge.serve import serve_http, serve_stdio

__all__ = [
    "Backend",
    "Bridge",
    "ClientBackend",
    "FederationBackend",
    "Source",
    "ToolSpec",
    "open_backend",
    "serve_http",
    "serve_stdio",
    "tools_for",
]
