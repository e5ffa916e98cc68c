"""``rcpkit eval``: measure a server's retrieval quality over the wire (Appendix F).

    rcpkit eval DATASET                      # rcpkit's engine, spawned over stdio
    rcpkit eval QUESTIONS.jsonl --index IDX  # questions and expected documents, an indexed corpus
    rcpkit eval DATASET --http URL           # any RCP server over HTTP
    rcpkit eval DATASET -- <server command>  # any RCP server over stdio (the CLI cuts at --)
    rcpkit eval --compare A.json B.json      # which queries a change helped or hurt

For the CLI: ``rcpkit.cli.eval_options.add_arguments`` declares the options (the engine
options --index/--embedder/… come from the CLI and shape the spawned
engine), ``run(args)`` returns the exit status: 0, 1 when ``--min-ratio`` is
not met, 2 for a usage error or a server that failed (one that dies
mid-run stops the run: its remaining queries would only score zeros).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rcpkit.cli.words import counted
from rcpkit.client import Client
from rcpkit.evaluation.dataset import Dataset, load_dataset
from rcpkit.evaluation.harness import Tick, evaluate
from rcpkit.evaluation.questions import load_questions
from rcpkit.evaluation.report import (
    Evaluation,
    compare,
    load_evaluation,
    plot,
    render_comparison,
    render_table,
    to_json,
)
from rcpkit.evaluation.stages import DEFAULT_STAGE
from rcpkit.protocol.errors import RCPError

__all__ = ["run"]

# What a spawned engine may inherit beyond the base set (§15.1): its own settings
# and the BLAS settings this machine needs for correct numerics.
_PASS_ENV_PREFIXES = ("RCPKIT_", "OPENBLAS_", "OMP_")
# The spawned `python -m rcpkit serve` must import the rcpkit this process runs.
_PASS_ENV_NAMES = ("PYTHONPATH",)


# The CLI's engine options (all but --index are passed on to `rcpkit serve`).
_ENGINE_OPTIONS = ("index", "config", "embedder", "sparse", "graph", "store")


def run(args: argparse.Namespace) -> int:
    try:
        if args.compare:
            return _compare(args)
        if args.dataset is None:
            raise ValueError("name a dataset folder (or --compare A B)")
        questions = args.dataset.is_file()  # a BEIR collection is a folder
        if questions:
            _check_questions_options(args)
        if args.federated:
            return _federated(args)
        for option in ("queries", "depth", "concurrency"):
            value = getattr(args, option)
            if value is not None and value < 1:
                raise ValueError(f"--{option} is at least 1, not {value}")
        command = list(getattr(args, "command", None) or [])  # what followed `--`
        if command and args.http:
            raise ValueError("evaluate either an HTTP URL or a command, not both")
        engine = [f"--{o}" for o in _ENGINE_OPTIONS if getattr(args, o, None) is not None]
        if engine and (command or args.http):
            raise ValueError(
                f"{', '.join(engine)} shape the engine rcpkit eval spawns; "
                "with --http or a command they would be ignored"
            )
        _check_extras(args)
        if args.stages is not None and not _stage_keys(args.stages):
            raise ValueError(f"--stages names no stage ({args.stages!r}); omit it for all")
        for option, path in (("--json", args.json), ("--plot", args.plot)):
            if path is not None and not path.parent.is_dir():  # found now, not after the run
                raise ValueError(f"{option}: the folder {path.parent} does not exist")
        if not args.no_progress:  # the first output comes at once, not after the load
            _log(f"eval: reading {args.dataset}")
        loaded = (
            load_questions(args.dataset) if questions else load_dataset(args.dataset, args.qrels)
        )
        dataset = loaded.half(args.split).subset(args.queries)
        if not args.no_progress:
            target = args.http or (" ".join(command) if command else "a spawned rcpkit serve")
            corpus = (
                "the server's documents" if questions else counted(len(dataset.corpus), "document")
            )
            queries = counted(len(dataset.queries), "query")
            _log(f"eval: {corpus}, {queries}; connecting to {target}")
        evaluation = asyncio.run(_evaluate(args, dataset, command))
    except ValueError as error:
        print(f"rcpkit eval: {error}", file=sys.stderr)
        return 2
    except RCPError as error:  # the server went away, or refused index/add or the probe
        print(f"rcpkit eval: the server failed: {error}", file=sys.stderr)
        return 2
    print(render_table(evaluation, markdown=args.markdown))
    if args.json is not None:
        args.json.write_text(json.dumps(to_json(evaluation), indent=1) + "\n", encoding="utf-8")
        print(f"\nwrote {args.json}")
    if args.plot is not None:
        plot(evaluation, args.plot)
        print(f"wrote {args.plot}")
    if args.min_ratio is not None and evaluation.baseline is not None:
        default = next((row for row in evaluation.rows if row.key == DEFAULT_STAGE), None)
        ratio = math.nan if default is None else evaluation.ratio(default)
        if not ratio >= args.min_ratio:  # a NaN ratio (the baseline scored 0) is not met
            got = (
                "there is no default run"
                if default is None
                else "the baseline's nDCG@10 is 0, so there is no ratio"
                if math.isnan(ratio)
                else f"the default run's nDCG@10 is {ratio:.3f}× the baseline's"
            )
            print(f"rcpkit eval: --min-ratio {args.min_ratio} is not met: {got}", file=sys.stderr)
            return 1
    return 0


async def _evaluate(args: argparse.Namespace, dataset: Dataset, command: list[str]) -> Evaluation:
    with _server(args, command) as (connect, fresh):
        client = await connect()
        try:
            index = client.raw_capabilities.get("index")
            if args.load == "always" and not (isinstance(index, dict) and index.get("writable")):
                raise ValueError("--load always, but the server is read-only (no index.writable)")
            return await evaluate(
                client,
                dataset,
                load=args.load == "always" or (args.load == "auto" and fresh),
                stages=_stage_keys(args.stages),
                depth=args.depth,
                seed=args.seed,
                concurrency=args.concurrency,
                bars=None if args.no_progress else _bar,
                log=None if args.no_progress else _log,
                layout=args.layout,
            )
        finally:
            await client.close()


@contextlib.contextmanager
def _server(args: argparse.Namespace, command: list[str]) -> Iterator[tuple[Any, bool]]:
    """How to connect, and whether the target starts without the corpus (``fresh``)."""
    token = os.environ.get(args.token_env) if args.token_env else None
    if args.token_env and not token:  # else the server's 401 hides the cause
        raise ValueError(f"--token-env: ${args.token_env} is not set")
    pass_env = [
        name
        for name in os.environ
        if name.startswith(_PASS_ENV_PREFIXES) or name in _PASS_ENV_NAMES
    ]
    if args.http:
        yield (lambda: Client.connect_http(args.http, token=token, timeout=600.0)), True
        return
    if command:
        yield (lambda: Client.connect_stdio(command, pass_env=pass_env, timeout=600.0)), True
        return
    with contextlib.ExitStack() as stack:
        folder: Path | None = args.index
        spawn = [sys.executable, "-m", "rcpkit", "serve", "--stdio"]
        if args.dataset.is_file():
            # A questions file: the corpus is an index already built (--index, else the
            # default one, $RCPKIT_INDEX), served read-only, as it is.
            _existing_index(args)
            fresh = False
            spawn += ["--read-only"]
            spawn += [] if folder is None else ["--index", str(folder)]
        else:
            shared = getattr(args, "store", None) is not None  # the corpus may be in the database
            fresh = shared or folder is None or not (folder / "index.sqlite3").exists()
            if folder is None:
                temporary = tempfile.TemporaryDirectory(prefix="rcpkit-eval-")
                folder = Path(stack.enter_context(temporary))
            spawn += ["--index", str(folder)]
            if fresh:
                spawn.append("--create")  # the harness loads the corpus into it
        for option in _ENGINE_OPTIONS[1:]:
            value = getattr(args, option, None)
            if value is not None:
                spawn += [f"--{option}", str(value)]
        yield (
            (
                lambda: Client.connect_stdio(
                    spawn, pass_env=pass_env, timeout=600.0, connect_timeout=120.0
                )
            ),
            fresh,
        )


def _federated(args: argparse.Namespace) -> int:
    import shlex

    from rcpkit.evaluation.federated import evaluate_federated, render_federated

    dataset = load_dataset(args.dataset, args.qrels).half(args.split).subset(args.queries)
    foreign = shlex.split(args.foreign) if args.foreign else None
    methods = [key.strip() for key in args.fusions.split(",") if key.strip()]
    log = None if args.no_progress else _log
    with contextlib.ExitStack() as stack:
        work = args.work or Path(stack.enter_context(tempfile.TemporaryDirectory()))
        evaluation = asyncio.run(
            evaluate_federated(
                dataset,
                work,
                foreign=foreign,
                unrelated=args.unrelated,
                methods=methods,
                concurrency=args.concurrency,
                log=log,
            )
        )
    print(render_federated(evaluation))
    return 0


def _check_questions_options(args: argparse.Namespace) -> None:
    """A questions file brings no corpus: nothing to load, no baseline to compare to."""
    refused = {
        "--load always": args.load == "always",
        "--min-ratio": args.min_ratio is not None,
        "--federated": args.federated,
    }
    named = [option for option, given in refused.items() if given]
    if named:
        raise ValueError(
            f"{args.dataset} is a questions file (no corpus, so no BM25 baseline and nothing to "
            f"load): {', '.join(named)} needs a BEIR-layout folder"
        )


def _existing_index(args: argparse.Namespace) -> None:
    """The index a questions file is asked of must exist (it is never created here)."""
    from rcpkit.cli.engine import require_index
    from rcpkit.engine.config import load_config

    require_index(load_config(args.config, index=args.index, store=getattr(args, "store", None)))


def _stage_keys(stages: str | None) -> list[str] | None:
    """``--stages a, b`` as keys; None (every stage) when the option is absent."""
    if stages is None:
        return None
    return [key.strip() for key in stages.split(",") if key.strip()]


def _check_extras(args: argparse.Namespace) -> None:
    """The ``eval`` extra's modules, found before the run rather than after it."""
    import importlib.util

    wanted = ["ir_measures", "bm25s", "Stemmer"]
    wanted += [] if args.no_progress else ["tqdm"]
    wanted += [] if args.plot is None else ["matplotlib"]
    missing = []
    for name in wanted:
        try:
            found = importlib.util.find_spec(name) is not None
        except ValueError:  # a module set to None in sys.modules
            found = False
        if not found:
            missing.append(name)
    if missing:
        raise ValueError(f"{', '.join(missing)} missing: pip install 'rcpkit[eval]'")


def _log(line: str) -> None:
    print(line, file=sys.stderr)


@contextlib.contextmanager
def _bar(total: int, label: str) -> Iterator[Tick]:
    """A tqdm bar on a terminal; elsewhere a plain line every few seconds (rcpkit.progress)."""
    from rcpkit.progress import Board

    name = "documents" if label == "index/add" else "queries"
    with Board(f"eval {label}", leave=False) as board:
        board.counter(name, total, "doc" if label == "index/add" else "q")
        done = 0

        def tick(count: int) -> None:
            nonlocal done
            done += count
            board.update(name, done)

        yield tick


def _compare(args: argparse.Namespace) -> int:
    sides = []
    for spec in args.compare:
        # The run key follows the last colon: a path may hold colons (dates, drive letters).
        path, _, key = spec.rpartition(":") if not Path(spec).exists() else (spec, "", "")
        sides.append((load_evaluation(Path(path)), key or None))
    labels_a, labels_b, changes = compare(sides[0], sides[1], args.measure)
    print(render_comparison((labels_a, labels_b), changes, args.measure))
    return 0
