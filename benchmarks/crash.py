"""Crash campaign: kill -9 a real `rcpkit serve` during index/add batches, then audit.

.venv/bin/python benchmarks/crash.py [--kills 240] [--seed N] [--markdown] [--json FILE]
(`rcpkit bench crash` runs the same campaign at 240 / 40 (--quick) / 4 (--smoke) kills;
this script takes any number of kills and a seed, and prints a line per round.)
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rcpkit_bench.crash import campaign_figures
from rcpkit_bench.report import machine, render_json, render_markdown, render_table, today


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=240)
    parser.add_argument("--seed", type=int, default=20260613)
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    rows = campaign_figures(args.kills, args.seed, verbose=True)
    print(render_markdown(rows) if args.markdown else render_table(rows))
    command = f"benchmarks/crash.py --kills {args.kills} --seed {args.seed}"
    if args.json is not None:
        meta = {"command": command, "date": today(), "machine": machine(), "scale": "full"}
        args.json.write_text(render_json(rows, **meta, skipped=[]), encoding="utf-8")
    clean = all(row.value == 0 for row in rows[1:])
    return 0 if clean else 1


if __name__ == "__main__":
    raise SystemExit(main())
