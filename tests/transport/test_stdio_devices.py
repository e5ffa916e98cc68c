"""`rcpkit serve` over stdio that is not a pipe: /dev/null and a tty (§5.1).

uvloop aborts the process (SIGABRT) when asked for a pipe transport over a
character device, so these run the real CLI in a subprocess.
"""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time

SERVE = [sys.executable, "-m", "rcpkit", "serve", "--engine", "keyword", "--sample"]
INVALID_REQUEST = b"{}\n"


def test_serve_with_stdout_on_dev_null_answers_and_exits_zero() -> None:
    with open(os.devnull, "wb") as null:
        done = subprocess.run(SERVE, input=INVALID_REQUEST, stdout=null, timeout=60)
    assert done.returncode == 0


def test_serve_with_stdin_on_dev_null_treats_eof_as_shutdown() -> None:
    with open(os.devnull, "rb") as null:
        done = subprocess.run(SERVE, stdin=null, capture_output=True, timeout=60)
    assert done.returncode == 0
    assert done.stdout == b""


def test_serve_with_stdout_on_a_tty_writes_the_answer_there() -> None:
    master, slave = pty.openpty()
    try:
        with subprocess.Popen(SERVE, stdin=subprocess.PIPE, stdout=slave) as child:
            assert child.stdin is not None
            child.stdin.write(INVALID_REQUEST)
            child.stdin.close()
            output = _read_line(master, deadline=time.monotonic() + 60)
            assert child.wait(timeout=60) == 0
    finally:
        os.close(slave)
        os.close(master)
    assert b'"error"' in output and b"-32600" in output


def test_serve_with_stdin_on_a_tty_reads_requests_from_it() -> None:
    master, slave = pty.openpty()
    try:
        with subprocess.Popen(SERVE, stdin=slave, stdout=subprocess.PIPE) as child:
            os.write(master, INVALID_REQUEST)
            assert child.stdout is not None
            answer = child.stdout.readline()
            os.write(master, b"\x04")  # ^D on an empty line: EOF on the tty
            assert child.wait(timeout=60) == 0
    finally:
        os.close(slave)
        os.close(master)
    assert b"-32600" in answer


def _read_line(fd: int, *, deadline: float) -> bytes:
    data = b""
    while b"\n" not in data:
        remaining = deadline - time.monotonic()
        assert remaining > 0, f"no answer on the tty; got {data!r}"
        ready, _, _ = select.select([fd], [], [], remaining)
        if ready:
            data += os.read(fd, 65536)
    return data
