"""Child processes in tests: bounded reads of what a child announces on stderr, and its end."""

from __future__ import annotations

import os
import re
import select
import subprocess
import time


def read_until(
    process: subprocess.Popen[bytes], buffer: bytes, pattern: bytes, timeout: float
) -> tuple[re.Match[bytes], bytes]:
    """Read the child's stderr onto ``buffer`` until ``pattern`` is in it, within ``timeout``.

    Returns the match and everything read so far (``buffer`` included); raises
    TimeoutError when the child says nothing matching in time, EOFError when it exits.
    """
    assert process.stderr is not None
    fd = process.stderr.fileno()
    deadline = time.monotonic() + timeout
    while (match := re.search(pattern, buffer)) is None:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            raise TimeoutError(f"no {pattern!r} on stderr: {buffer.decode()}")
        chunk = os.read(fd, 65536)
        if not chunk:
            raise EOFError(f"exited before {pattern!r}: {buffer.decode()}")
        buffer += chunk
    return match, buffer


def stop(process: subprocess.Popen[bytes]) -> None:
    """Kill the child if it still runs, reap it (bounded) and close its stderr pipe."""
    if process.poll() is None:
        process.kill()
    process.wait(10)
    assert process.stderr is not None
    process.stderr.close()
