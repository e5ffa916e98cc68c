"""Federation keeps relevance (issue 16, goal 3): `rcpkit eval DATASET --federated`, as a script.

    nice -n 10 .venv/bin/python benchmarks/federation.py [DATASET] [rcpkit eval options]

DATASET defaults to the shared Cranfield. The benchmark itself lives in
``rcpkit.evaluation.federated``: the collection split into two shards served by
two rcpkit engines, a third engine over an unrelated collection (the generated
docstrings, or ``--unrelated DIR``) and, with ``--foreign CMD``, another RCP
server, all behind ``rcpkit gateway``; each fusion of ``--fusions`` (default
``rrf,calibrated``) against one engine holding the whole collection. Every
other option is ``rcpkit eval``'s (``--work DIR`` keeps the engines' indexes
for the next run, ``--split dev`` runs the development half only), so this
script only fills in ``--federated`` and the dataset.
"""

from __future__ import annotations

import sys
from pathlib import Path

from rcpkit.cli import main

CRANFIELD = Path(__file__).resolve().parents[1] / ".." / "shared" / "datasets" / "cranfield"

if __name__ == "__main__":
    words = sys.argv[1:]
    if not words or words[0].startswith("-"):
        words = [str(CRANFIELD.resolve()), *words]
    if "--federated" not in words:
        words.insert(1, "--federated")
    sys.exit(main(["eval", *words]))
