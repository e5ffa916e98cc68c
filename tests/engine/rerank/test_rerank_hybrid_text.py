"""The hybrid reranker over passages it is given: analysed as the feedback pass analyses rows."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from rcpkit.engine.models import HashingEmbedder
from rcpkit.engine.rerank import _hybrid
from rcpkit.engine.text.analysis import analyze_code_many, analyze_query

PASSAGES = [
    f"def parse_filter_{n}(text):\n    return split_tokens(text, sep_char)\n" for n in range(4)
]


def test_the_feedback_pass_reads_passages_and_query_as_its_first_pass_did(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    given: list[tuple[list[str], list[list[str]]]] = []
    real = _hybrid.expansion_terms

    def spy(query: Sequence[str], passages: Sequence[Sequence[str]], count: int) -> list[str]:
        given.append((list(query), [list(p) for p in passages]))
        return real(query, passages, count)

    monkeypatch.setattr(_hybrid, "expansion_terms", spy)
    reranker = _hybrid.HybridReranker(HashingEmbedder(64), None, feedback=3)
    scores = reranker.score("parse_filter tokens", PASSAGES)
    assert len(scores) == len(PASSAGES)
    ((query, passages),) = given
    # The query as its first BM25 read it, the passages as the rows were analysed
    # (identifiers split: "splittoken", "split"; not prose's "split_token").
    assert query == analyze_query("parse_filter tokens")
    analysed = analyze_code_many(PASSAGES)
    assert all(passage in analysed for passage in passages) and len(passages) == 3
