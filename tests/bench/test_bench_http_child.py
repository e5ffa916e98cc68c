"""The HTTP benchmarks' server child keeps running however much it logs.

A server that logs past the pipe's buffer (64 KiB on Linux) after announcing its
address used to block on its next write: nobody read its stderr after start-up,
so a long run with a chatty server stalled instead of measuring.
"""

from __future__ import annotations

import sys

from rcpkit_bench.http import _Child

_CHATTY = (
    "import sys\n"
    "sys.stderr.write('serving RCP over HTTP on http://127.0.0.1:9/rcp\\n'); sys.stderr.flush()\n"
    "for _ in range(4096): sys.stderr.write('x' * 255 + '\\n')\n"  # 1 MiB
    "sys.stderr.flush()\n"
)


def test_a_child_that_logs_a_megabyte_after_start_up_runs_to_its_end() -> None:
    child = _Child.spawn([sys.executable, "-c", _CHATTY])
    assert child.url == "http://127.0.0.1:9/rcp"
    assert child.process.wait(timeout=45) == 0  # blocked on a full pipe before
    child.stop()
