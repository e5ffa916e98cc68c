"""`hyde`, feedback-based: a pseudo-document made only of the top passages' sentences."""

from __future__ import annotations

from transform_support import memory_corpus

from rcpkit.engine.transform import TransformOptions, transform
from rcpkit.engine.transform._text import sentences

PASSAGES = [
    "Photosynthesis converts light energy into chemical energy. It happens in chloroplasts. "
    "The weather was pleasant that day.",
    "Chlorophyll absorbs light for photosynthesis. Photosynthesis converts light energy into "
    "chemical energy.",
    "Plants release oxygen as a product of photosynthesis in the light reactions.",
    "Volcanoes erupt when magma rises.",
]
CORPUS, _ = memory_corpus(PASSAGES)


def test_hyde_returns_the_query_and_a_pseudo_document() -> None:
    result = transform("hyde", "photosynthesis light energy", CORPUS)
    assert result.queries == ["photosynthesis light energy"]
    assert result.rewritten == "photosynthesis light energy"
    assert result.merge == "single"
    assert result.hypothetical is not None


def test_the_pseudo_document_is_built_only_from_corpus_sentences() -> None:
    hypothetical = transform("hyde", "photosynthesis light energy", CORPUS).hypothetical
    assert hypothetical is not None
    corpus_sentences = {sentence for passage in PASSAGES for sentence in sentences(passage)}
    assert set(sentences(hypothetical)) <= corpus_sentences


def test_the_most_relevant_sentence_comes_first_and_irrelevant_ones_are_left_out() -> None:
    hypothetical = transform("hyde", "photosynthesis light energy", CORPUS).hypothetical
    assert hypothetical is not None
    assert hypothetical.startswith("Photosynthesis converts light energy into chemical energy.")
    assert "weather" not in hypothetical
    assert "Volcanoes" not in hypothetical


def test_repeated_sentences_appear_once() -> None:
    hypothetical = transform("hyde", "photosynthesis light energy", CORPUS).hypothetical
    assert hypothetical is not None
    assert hypothetical.count("Photosynthesis converts light energy") == 1


def test_the_pseudo_document_is_capped_in_words() -> None:
    long_passages = [f"Photosynthesis step {i} uses light energy in leaves." for i in range(60)]
    corpus, _ = memory_corpus(long_passages)
    options = TransformOptions(hyde_passages=60, hypothetical_words=120)
    hypothetical = transform("hyde", "photosynthesis light", corpus, options=options).hypothetical
    assert hypothetical is not None
    assert 100 <= len(hypothetical.split()) <= 120


def test_hyde_reports_no_pseudo_document_when_the_corpus_returns_nothing() -> None:
    result = transform("hyde", "quantum chromodynamics", CORPUS)
    assert result.hypothetical is None
    assert result.queries == ["quantum chromodynamics"]
    assert result.notes
