from __future__ import annotations

from rcpkit.engine.graph import normalize_key
from rcpkit.engine.graph._normalize import singular
from rcpkit.engine.graph._text import sentence_spans, terms


def test_keys_are_casefolded_without_determiners_or_edge_punctuation() -> None:
    assert normalize_key("The South Pole") == "south pole"
    assert normalize_key("  “the  Fram”, ") == "fram"
    assert normalize_key("an experimental study") == "experimental study"


def test_possessives_are_stripped() -> None:
    assert normalize_key("Amundsen's") == "amundsen"
    assert normalize_key("the Curies’ laboratory") == "curies laboratory"


def test_plural_heads_merge_only_when_asked() -> None:
    assert normalize_key("copper sulfates", singularize=True) == "copper sulfate"
    assert normalize_key("the sledges", singularize=True) == "sledge"
    assert normalize_key("Paris", singularize=True) == "paris"
    assert normalize_key("sledges") == "sledges"


def test_singular_follows_simple_suffix_rules() -> None:
    assert [singular(w) for w in ["batteries", "boxes", "churches", "dogs", "gas", "analysis"]] == [
        "battery",
        "box",
        "church",
        "dog",
        "gas",
        "analysis",
    ]


def test_keys_with_nothing_content_bearing_are_empty() -> None:
    assert normalize_key("the") == ""
    assert normalize_key("1911") == ""
    assert normalize_key("!!") == ""


def test_sentences_split_after_terminal_punctuation_but_not_after_titles() -> None:
    text = "Dr. Lena Park arrived. She met J. Smith! Then they left"
    spans = sentence_spans(text)
    assert [text[a:b] for a, b in spans] == [
        "Dr. Lena Park arrived.",
        "She met J. Smith!",
        "Then they left",
    ]


def test_terms_are_singular_content_words_without_repeats() -> None:
    assert terms("The dogs and the dog pulled sledges") == ["dog", "pulled", "sledge"]
