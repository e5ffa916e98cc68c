"""Choose pipeline settings by the WORST development ratio across collections (issue 33).

    PYTHONPATH=src python benchmarks/quality_worst.py [--names a,b] [--final] [--json OUT]
        GRID='{"alpha": [0.8, 0.85]}' BM25_GRID='{"b": [0.4, 0.6]}'

Runs ``benchmarks/quality_lab.py`` (cached MiniLM vectors, numpy BM25, the
default pipeline's feedback pass) on every collection of
``rcpkit.evaluation.collections`` (generated under ``--collections`` when
missing), loaded as outside judges load them (``--format judged
--meta-title``), with the same ``GRID`` / ``BM25_GRID`` on each. Every point's
nDCG@10 on a collection's dev half is divided by the in-run bm25s baseline of
that half; the points are ranked by their lowest ratio over the collections
(ties by the mean), never by the mean alone. ``--final`` also reads the
held-out halves, for the table of the chosen point — choose first.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from statistics import fmean

from rcpkit.evaluation.collections import COLLECTIONS, ensure

LAB = Path(__file__).with_name("quality_lab.py")
_LINE = re.compile(r"^(?P<name>.+?)\s+dev (?P<dev>[\d.]+)(?:\s+heldout (?P<held>[\d.]+))?")


def run_lab(folder: Path, final: bool) -> dict[str, dict[str, float]]:
    command = [sys.executable, str(LAB), str(folder), "--format", "judged", "--meta-title"]
    done = subprocess.run(
        command + (["--final"] if final else []),
        capture_output=True, text=True, check=True, env={**os.environ},
    )  # fmt: skip
    points: dict[str, dict[str, float]] = {}
    for line in done.stdout.splitlines():
        match = _LINE.match(line)
        if match:
            row = {"dev": float(match["dev"])}
            if match["held"]:
                row["heldout"] = float(match["held"])
            points[match["name"].strip()] = row
    return points


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collections", type=Path, default=Path("/tmp/q33/collections"))
    parser.add_argument("--names", default=",".join(COLLECTIONS))
    parser.add_argument("--final", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    names = args.names.split(",")
    results = {}
    for name in names:
        folder = ensure(name, args.collections)
        results[name] = run_lab(folder, args.final)
        print(f"# {name}: {len(results[name])} rows", file=sys.stderr, flush=True)
    halves = ("dev", "heldout") if args.final else ("dev",)
    base = {n: results[n]["bm25s baseline"] for n in names}
    points = [p for p in results[names[0]] if p != "bm25s baseline"]
    table = []
    for point in points:
        ratios = {
            n: {h: results[n][point][h] / base[n][h] for h in halves if point in results[n]}
            for n in names
        }
        dev = [ratios[n]["dev"] for n in names]
        table.append((min(dev), fmean(dev), point, ratios))
    table.sort(key=lambda row: (-row[0], -row[1]))
    print("| point | worst dev | mean dev | " + " | ".join(names) + " |")
    print("|---|---|---|" + "---|" * len(names))
    for worst, mean, point, ratios in table:
        cells = [
            " / ".join(f"{ratios[n][h]:.3f}" for h in halves) if ratios[n] else "—" for n in names
        ]
        print(f"| {point} | {worst:.4f} | {mean:.4f} | " + " | ".join(cells) + " |")
    if args.json:
        args.json.write_text(json.dumps({"results": results, "names": names}, indent=1))


if __name__ == "__main__":
    main()
