"""The web console: static pages that speak only the public RCP HTTP API.

``rcpkit serve --http`` serves it at ``/ui`` (``--no-ui`` turns it off);
``rcpkit console URL`` serves the same files locally against any RCP server.
The files are plain HTML, CSS and ES modules under ``static/``, shipped in the
wheel; there is no build step.
"""

from __future__ import annotations

from rcpkit.console.assets import CONSOLE_PATH, ConsoleSite, StaticReply

__all__ = ["CONSOLE_PATH", "ConsoleSite", "StaticReply"]
