"""rcpkit.progress: bars on a terminal, a plain line every few seconds elsewhere."""

from __future__ import annotations

import io

from rcpkit.progress import Board


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_gets_bars_with_done_of_total_rate_and_the_current_file() -> None:
    stream = _Terminal()
    with Board("indexing", stream=stream) as board:
        board.counter("files", 3, "file")
        board.counter("chunks", 0, "chunk")
        board.grow("chunks", 10)
        board.update("chunks", 4)
        board.update("files", 1, "guide.md")
    drawn = stream.getvalue()
    assert "\r" in drawn  # redrawn in place
    assert "1/3" in drawn
    assert "4/10" in drawn
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
