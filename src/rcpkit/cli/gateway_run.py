"""``rcpkit gateway rcp.json [--http [HOST:]PORT]``: serve a registry's engines as one.

For the CLI: ``add_arguments(parser)`` declares the options, ``run(args)``
returns the exit status (0 after an orderly shutdown, 1 when a required
engine is unavailable at start-up, 2 for a bad registry or options).
"""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any

from rcpkit.cli.gateway_options import add_arguments
from rcpkit.cli.observe_options import observer_from_args
from rcpkit.federation.federation import Federation
from rcpkit.federation.fusion import RRF_K_DEFAULT, FusionConfig
from rcpkit.federation.health import HealthPolicy
from rcpkit.federation.hops import inherited_path
from rcpkit.federation.registry import Registry, RegistryError, load_registry
from rcpkit.gateway.metrics import watch_engines
from rcpkit.gateway.server import default_identity
from rcpkit.observe.observer import Observer
from rcpkit.observe.serving import observed
from rcpkit.protocol.errors import RCPError

__all__ = ["add_arguments", "run"]

log = logging.getLogger("rcpkit.gateway")


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(
        stream=sys.stderr,
        level=str(args.log_level).upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        registry = load_registry(args.registry)
        rrf_k = RRF_K_DEFAULT if args.rrf_k is None else args.rrf_k
        fusion = FusionConfig(method=args.fusion, rrf_k=rrf_k, dedup=args.dedup)
        http = _http_config(args) if args.http is not None else None
        health = HealthPolicy(args.slow_engine, args.slow_strikes, args.demoted_timeout)
        observer, metrics_at = observer_from_args(args)
    except (RegistryError, ValueError, OSError, RuntimeError) as error:
        print(f"rcpkit gateway: {error}", file=sys.stderr)
        return 2
    from rcpkit.server.runner import run_async

    status: list[int] = [0]
    serving = _serve(args, registry, fusion, http, status, health, observer)
    run_async(observed(observer, metrics_at, serving))
    return status[0]


async def _serve(
    args: argparse.Namespace,
    registry: Registry,
    fusion: FusionConfig,
    http: tuple[Any, Any] | None,
    status: list[int],
    health: HealthPolicy,
    observer: Observer | None,
) -> None:
    from rcpkit.gateway.server import build_gateway

    identity = args.identity or default_identity(args.name, registry)
    spawned_by = inherited_path()
    federation = Federation(
        registry,
        identity=identity,
        inherited_path=spawned_by,
        connect_timeout=args.connect_timeout,
        engine_timeout=args.engine_timeout,
        query_timeout=args.deadline,
        fusion=fusion,
        health=health,
        reconnect_after=args.reconnect_after,
    )
    if observer is not None and observer.metrics is not None:
        watch_engines(federation, observer.metrics)
    try:
        if identity in spawned_by:
            # Started by ourselves, through the registry: connecting would spawn us
            # again, forever. Serve an empty catalog; the parent sees our identity
            # and skips us (§16.2).
            log.warning("federation cycle: %s is already in the path; not federating", identity)
        else:
            for failure in await federation.connect():
                print(f"rcpkit gateway: {failure.note()} (skipped)", file=sys.stderr, flush=True)
        server = build_gateway(federation, name=args.name, hide_endpoints=args.hide_endpoints)
        if http is None:
            await server.serve_stdio(
                deadline=args.deadline,
                max_batch=args.max_batch,
                max_line_bytes=args.max_line_bytes,
                observer=observer,
            )
        else:
            from rcpkit.transport.http.serve import serve_http

            await serve_http(server, *http, observer=observer)
    except RCPError as error:
        print(f"rcpkit gateway: {error.message}", file=sys.stderr, flush=True)
        status[0] = 1
    finally:
        await federation.close()


def _http_config(args: argparse.Namespace) -> tuple[Any, Any]:
    # The same options, parsed the same way, as `rcpkit serve --http`.
    from rcpkit.cli.http_serve import config_from_args

    if (getattr(args, "workers", None) or 1) > 1:
        # Its engines' connections, health and session calibration live in one process.
        raise ValueError("rcpkit gateway serves from one process: --workers 1")
    return config_from_args(args)
