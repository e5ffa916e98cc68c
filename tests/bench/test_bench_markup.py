"""Prose out of roff, Markdown, reST and comments: the scale benchmarks' real text."""

from __future__ import annotations

import gzip
from pathlib import Path

from rcpkit_bench import _markup

_SENTENCE = "the quick brown fox jumps over the lazy dog while the cat sleeps on the warm mat"


def test_roff_keeps_the_prose_of_a_manual_page_and_drops_requests_escapes_and_examples() -> None:
    page = "\n".join(
        [
            '.\\" a comment that is not text',
            '.TH LS "1" "September 2022"',
            ".SH DESCRIPTION",
            "List \\fBinformation\\fR about the FILEs\\(emthe current",
            ".B directory",
            "by default\\-always.",
            ".PP",
            "Second paragraph.",
            ".nf",
            "ls -la | grep code",
            ".fi",
            "After the example.",
        ]
    )
    assert [p for p in _markup.roff(page) if p] == [
        "List information about the FILEs—the current directory by default-always.",
        "Second paragraph.",
        "After the example.",
    ]


def test_roff_mdoc_inline_macros_keep_their_words_and_a_bare_nm_names_the_page() -> None:
    page = ".Sh NAME\n.Nm ssh\n.Sh DESCRIPTION\n.Nm\nis a program for\n.Em remote\nlogins."
    assert [p for p in _markup.roff(page) if p] == ["ssh", "ssh is a program for remote logins."]


def test_markdown_keeps_paragraph_text_and_drops_code_headings_tables_and_link_targets() -> None:
    text = (
        "# Title\n\nSee the [guide](https://x.org/g) and **bold** `code` words.\n\n"
        "```python\nprint('not prose')\n\nstill code\n```\n\n"
        "| a | b |\n|---|---|\n\n    indented code\n\n- item one\n- item two\n"
        "<!-- hidden -->"
    )
    assert [p for p in _markup.markdown(text) if p] == [
        "See the guide and bold code words.",
        "item one item two",
    ]


def test_restructured_text_drops_titles_directives_and_literal_blocks() -> None:
    text = (
        "Title\n=====\n\nUse :func:`open` or `the docs <https://x.org>`_ here::\n\n"
        "    code = 1\n\n.. note::\n\n   A directive's body.\n\nBack to *prose*."
    )
    assert [p for p in _markup.restructured_text(text) if p] == [
        "Use open or the docs here:",
        "Back to prose.",
    ]


def test_comments_are_block_comments_and_runs_of_line_comments() -> None:
    source = "/*\n * First block\n * comment.\n */\nint x; // trailing\n// one\n// two\nint y;"
    assert [p.split() for p in _markup.comments(source) if p.strip()] == [
        ["First", "block", "comment."],
        ["one", "two"],
    ]


def test_prose_windows_leave_out_option_lists_code_and_licence_text() -> None:
    prose = f"{_SENTENCE} {_SENTENCE}"
    options = " ".join(f"--opt{n}=X -v{n}" for n in range(12))
    licence = f"Permission is hereby granted, free of charge, {_SENTENCE}"
    assert list(_markup.prose_windows([prose, options, licence])) == [prose]


def test_a_gzip_manual_page_is_read_to_its_prose_windows(tmp_path: Path) -> None:
    page = tmp_path / "fox.1.gz"
    page.write_bytes(gzip.compress(f".SH DESCRIPTION\n{_SENTENCE}\n.B {_SENTENCE}\n".encode()))
    assert list(_markup.manual_page(page)) == [f"{_SENTENCE} {_SENTENCE}"]
