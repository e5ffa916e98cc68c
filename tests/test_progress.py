"""rcpkit.progress: bars on a terminal, a plain line every few seconds elsewhere."""

from __future__ import annotations

import io
import math
import re

from rcpkit.progress import Board


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_gets_bars_with_done_of_total_rate_and_the_current_file() -> None:
    stream = _Terminal()
    with Board("indexing", stream=stream) as board:
        board.counter("files", 3, "file")
        board.counter("chunks", None, "chunk")
        board.update("chunks", 4)
        board.update("files", 1, "guide.md")
    drawn = stream.getvalue()
    assert "\r" in drawn  # redrawn in place
    assert "1/3" in drawn
    chunks = [part for part in drawn.replace("\n", "\r").split("\r") if "chunks" in part]
    assert chunks and "4chunk" in chunks[-1]
    assert not any("%" in part or "/10" in part for part in chunks)  # no total, no ETA
    assert "guide.md" in drawn
    assert "file/s" in drawn or "s/file" in drawn


def test_a_log_gets_a_line_at_most_every_interval_and_one_at_the_end() -> None:
    stream = io.StringIO()
    with Board("indexing", stream=stream, interval=3600) as board:
        board.say("2 files to read")
        board.counter("files", 2)
        board.update("files", 1, "a.md")  # the first update prints (nothing printed yet)
        board.update("files", 2, "b.md")  # within the interval: silent
    lines = stream.getvalue().splitlines()
    assert lines[0] == "indexing: 2 files to read"
    assert lines[1].startswith("indexing: files 1/2 (") and lines[1].endswith(", now a.md")
    assert lines[2].startswith("indexing: files 2/2 (") and " in 0:00:00" in lines[2]
    assert len(lines) == 3
    assert "\r" not in stream.getvalue()


def test_a_counter_without_a_total_logs_a_count_and_a_rate_but_no_eta() -> None:
    stream = io.StringIO()
    with Board("indexing", stream=stream, interval=0) as board:
        board.counter("files", 4)
        board.counter("chunks", None)
        board.update("chunks", 300)
        board.update("files", 1, "a.md")
    lines = stream.getvalue().splitlines()
    assert all("files " in line and "/4" in line for line in lines)
    assert all(re.search(r"chunks 300 \(\d+(\.\d)?/s\)", line) for line in lines), lines
    assert all("chunks 300/" not in line for line in lines)
    assert "ETA" in lines[-2] and lines[-2].count("ETA") == 1  # the files' ETA only


def test_the_eta_is_the_bytes_left_at_the_rate_of_the_bytes_done() -> None:
    # Issue 51: the ETA comes from bytes done against the bytes still to do; bytes
    # that need no work (unchanged files) leave the total instead of inflating the rate.
    now = [100.0]
    stream = io.StringIO()
    with Board("indexing", stream=stream, interval=0, clock=lambda: now[0]) as board:
        board.counter("bytes", 3_000_000, "B")
        board.counter("files", 30, "file", eta=False)
        now[0] = 110.0
        board.retotal("bytes", 2_000_000)  # 1 MB of unchanged files
        board.update("files", 12)
        board.update("bytes", 500_000, "a.md")  # 50 kB/s over the 10 s since it began
    progress = stream.getvalue().splitlines()[-2]
    assert "bytes 500.0 kB/2.0 MB (50.0 kB/s, ETA 0:00:30)" in progress, progress
    assert "files 12/30 (1.2/s)," in progress  # its total, but no second ETA
    assert progress.count("ETA") == 1


def test_a_counter_without_an_eta_draws_no_time_left_on_a_terminal() -> None:
    stream = _Terminal()
    with Board("indexing", stream=stream) as board:
        board.counter("bytes", 1000, "B")
        board.counter("files", 10, "file", eta=False)
        board.update("bytes", 100)
        board.update("files", 1, "a.md")
    parts = stream.getvalue().replace("\n", "\r").split("\r")
    files = [part for part in parts if part.startswith("files")]
    assert files and all("<" not in part for part in files)  # tqdm's "elapsed<left"
    assert any("1/10" in part for part in files)
    assert any(part.startswith("bytes") and "<" in part for part in parts)


def test_an_infinite_interval_logs_only_the_last_line() -> None:
    stream = io.StringIO()
    with Board("indexing", stream=stream, interval=math.inf) as board:
        board.say("2 files to read")
        board.counter("files", 2)
        board.update("files", 1, "a.md")
        board.update("files", 2, "b.md")
    lines = stream.getvalue().splitlines()
    assert lines[0] == "indexing: 2 files to read"
    assert len(lines) == 2 and lines[1].startswith("indexing: files 2/2 (")
