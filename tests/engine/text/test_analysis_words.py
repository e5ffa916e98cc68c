"""One scan of a text for its index terms and its surface words gives both exactly."""

from __future__ import annotations

import random

import pytest

from rcpkit.engine.text.analysis import (
    analyze_code_many,
    analyze_many,
    analyze_with_words,
    surface_words,
)

PIECES = ["the", "Wing", "ﬁrst", "ＦＵＬＬ", "straße", "İ", "parse_filter", "HTTPServer2", "é",
          "x" * 64, "y" * 65, "42", "of", "and", ",", ".", "\n", "  ", "naïve", "Σ"]  # fmt: skip


def _texts(count: int) -> list[str]:
    generator = random.Random(51)
    return ["".join(generator.choices(PIECES, k=generator.randint(0, 30))) for _ in range(count)]


@pytest.mark.parametrize("code", [False, True])
def test_terms_and_words_are_those_of_the_two_analyzers(code: bool) -> None:
    texts = [*_texts(400), "", "the and of", "a " + "y" * 65]
    terms, words = analyze_with_words(texts, code)
    assert terms == (analyze_code_many if code else analyze_many)(texts)
    assert words == [surface_words(text) for text in texts]
