from __future__ import annotations

from rcpkit.transport.framing import LineSplitter, Oversized


def test_a_message_split_across_reads_is_reassembled() -> None:
    splitter = LineSplitter(100)
    assert splitter.feed(b'{"a"') == []
    assert splitter.feed(b":1}\n") == [b'{"a":1}']


def test_several_messages_in_one_read_are_all_returned() -> None:
    assert LineSplitter(100).feed(b"1\n2\n3\n") == [b"1", b"2", b"3"]


def test_blank_lines_are_ignored() -> None:
    assert LineSplitter(100).feed(b"\n\n  \n1\r\n\n") == [b"1\r"]


def test_an_oversized_line_is_dropped_while_it_streams_in() -> None:
    splitter = LineSplitter(10)
    for _ in range(1000):
        assert splitter.feed(b"x" * 1000) == []
        assert len(splitter._buffer) <= 10  # never holds the line in memory
    assert splitter.feed(b"x\nok\n") == [Oversized(1_000_001), b"ok"]


def test_a_line_at_the_limit_is_kept() -> None:
    assert LineSplitter(3).feed(b"abc\nabcd\n") == [b"abc", Oversized(4)]


def test_an_unterminated_last_line_counts_at_end_of_input() -> None:
    splitter = LineSplitter(100)
    assert splitter.feed(b"1\n2") == [b"1"]
    assert splitter.finish() == [b"2"]
