"""The contextual prefix and the deterministic test token counter."""

from __future__ import annotations

from rcpkit.engine.ingest import contextual_prefix, whitespace_token_counter


def test_contextual_prefix_joins_title_and_headings() -> None:
    assert contextual_prefix("Refund policy", ["Limits"]) == "Refund policy › Limits\n"
    assert contextual_prefix(None, ("Install", "On Linux")) == "Install › On Linux\n"
    assert contextual_prefix("Guide", ("Guide", "Setup")) == "Guide › Setup\n"
    assert contextual_prefix("  Spaced   title ", ()) == "Spaced title\n"
    assert contextual_prefix(None, ()) == ""
    assert contextual_prefix("", ["", " "]) == ""


def test_the_whitespace_counter_is_deterministic_and_rounds_up() -> None:
    assert whitespace_token_counter(["", "one", "a b", " ".join("w" * 10 for _ in range(10))]) == [
        0,
        2,
        3,
        13,
    ]
