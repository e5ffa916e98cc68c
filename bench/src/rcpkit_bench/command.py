"""``rcpkit bench [all|protocol|engine|http|fuzz|load|auth|crash|gateway|mcp|cache|race|...]``.

``all`` is the speed suites; the campaigns (``load``, ``auth``, ``crash``: kill -9
during writes, then an audit; ``gateway``: lying engines; ``mcp``: the MCP bridge;
``cache``: damaged cache files, then a restart; ``race``: writers racing on one
index; ``solr-faults``: a SolrCloud node killed under reads and writes;
``solr``: rcpkit over a 3-node SolrCloud against the embedded engine) run only
when named.

For the CLI: ``add_arguments(parser)`` declares the options, ``run(args)``
runs the chosen suites in order and returns the exit status: 0 when every
suite ran, 2 when one could not run here (a missing tool; the others still
report) or a file to update has no generated block.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable
from functools import partial

from rcpkit.cli.bench_options import SUITES, add_arguments
from rcpkit_bench.report import (
    BenchUnavailable,
    Figure,
    Scale,
    machine,
    provenance,
    render_json,
    render_markdown,
    render_table,
    replace_block,
    today,
    update_file,
)

__all__ = ["SUITES", "add_arguments", "run"]


# Suite name -> the module whose ``run(scale)`` it is, imported when the suite runs (the
# engine suite needs numpy, the HTTP suite uvicorn).
_MODULES = {
    "protocol": "protocol",
    "engine": "engine",
    "http": "http",
    "fuzz": "fuzz",
    "load": "load",
    "auth": "auth",
    "crash": "crash",
    "gateway": "gateway_campaign",
    "mcp": "mcp_campaign",
    "cache": "cache_files",
    "race": "race",
    "tenants": "tenant_stats",
    "solr-faults": "solr_faults",
    "solr": "solr_scale",
}


def _suite(
    name: str,
    store: str | None = None,
    sizes: list[int] | None = None,
    hnsw_up_to: int | None = None,
    rounds: int | None = None,
    seed: int | None = None,
) -> Callable[[Scale], list[Figure]]:
    run: Callable[..., list[Figure]] = importlib.import_module(f"rcpkit_bench.{_MODULES[name]}").run
    if name == "engine":
        return partial(run, store=store, sizes=sizes, hnsw_up_to=hnsw_up_to)
    if name == "tenants":
        return partial(run, store=store)
    if name == "solr-faults":
        return partial(run, rounds=rounds, seed=seed)
    if name == "solr":
        return partial(run, sizes=sizes)
    return run


def _command(args: argparse.Namespace, scale: Scale) -> str:
    words = ["rcpkit", "bench"]
    if args.suite != "all":
        words.append(args.suite)
    if scale != "full":
        words.append(f"--{scale}")
    if args.store:
        words += ["--store", args.store if args.store == "postgres" else "URL"]
    if args.sizes:
        words += ["--sizes", ",".join(_spelled(size) for size in args.sizes)]
    if args.hnsw_up_to:
        words += ["--hnsw-up-to", _spelled(args.hnsw_up_to)]
    if args.rounds is not None:
        words += ["--rounds", str(args.rounds)]
    if args.seed is not None:
        words += ["--seed", str(args.seed)]
    if args.markdown:
        words.append("--markdown")
    for path in args.update_readme:
        words += ["--update-readme", str(path)]
    return " ".join(words)


def _spelled(size: int) -> str:
    for suffix, scale in (("m", 1_000_000), ("k", 1_000)):
        if size % scale == 0:
            return f"{size // scale}{suffix}"
    return str(size)


def run(args: argparse.Namespace) -> int:
    scale: Scale = "quick" if args.quick else "smoke" if args.smoke else "full"
    for path in args.update_readme:  # fail now, not after the whole run
        replace_block(path.read_text(encoding="utf-8"), "", str(path))
    figures: list[Figure] = []
    skipped: list[str] = []
    for name in SUITES if args.suite == "all" else (args.suite,):
        print(f"rcpkit bench: running {name} ({scale}) …", file=sys.stderr, flush=True)
        try:
            suite = _suite(
                name, args.store, args.sizes, args.hnsw_up_to, rounds=args.rounds, seed=args.seed
            )
            figures += suite(scale)
        except BenchUnavailable as error:
            print(f"rcpkit bench: {name} skipped: {error}", file=sys.stderr)
            skipped.append(name)
    if not figures:
        return 2
    command = _command(args, scale)
    line = provenance(command, scale, skipped)
    print(render_markdown(figures) if args.markdown else render_table(figures))
    print(line)
    if args.json is not None:
        meta = {"command": command, "date": today(), "machine": machine(), "scale": scale}
        args.json.write_text(render_json(figures, **meta, skipped=skipped), encoding="utf-8")
    for path in args.update_readme:
        update_file(path, f"{render_markdown(figures)}\n{line}\n")
    if any(figure.unit == "failures" and figure.value > 0 for figure in figures):
        return 1  # a campaign found a defect: its audit lines on stderr say which
    return 2 if skipped else 0
