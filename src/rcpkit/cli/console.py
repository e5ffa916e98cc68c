"""``rcpkit console URL``: open the web console against any RCP server over HTTP."""

from __future__ import annotations

import argparse
import sys

__all__ = ["HELP", "add_arguments", "run"]

HELP = "serve the web console locally for an RCP server at URL (docs/console.md)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("url", help="the server's RCP base, e.g. http://127.0.0.1:8080/rcp")
    parser.add_argument(
        "--port", type=int, default=0, help="local port for the console (default: a free one)"
    )
    parser.add_argument(
        "--host", default="127.0.0.1", help="local address to bind (default: 127.0.0.1)"
    )
    parser.add_argument(
        "--metrics", default=None, metavar="URL", help="the server's GET /metrics, for Health"
    )
    parser.add_argument(
        "--no-open", action="store_true", help="print the console's URL, do not open a browser"
    )


def run(args: argparse.Namespace) -> int:
    from rcpkit.console.local import LocalConsole
    from rcpkit.transport.http.config import is_loopback

    console = LocalConsole(args.url, metrics=args.metrics, host=args.host, port=args.port)
    if not is_loopback(args.host):
        print(
            f"rcpkit: WARNING: --host {args.host} serves the console to every network "
            "this address reaches (its pages are public; each call still needs the "
            "server's own token)",
            file=sys.stderr,
            flush=True,
        )
    origin = console.url.removesuffix("/ui")
    print(f"rcpkit: console for {console.site.api} on {console.url}", file=sys.stderr, flush=True)
    print(
        f"rcpkit: the server must allow this origin: --cors-origin {origin}",
        file=sys.stderr,
        flush=True,
    )
    if not args.no_open:
        import webbrowser

        webbrowser.open(console.url)
    try:
        console.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        console.close()
    return 0
