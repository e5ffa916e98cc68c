from __future__ import annotations

from rcpkit.engine.graph import NAME_LABEL, PHRASE_LABEL, Extractor, RegexExtractor


def test_capitalised_runs_become_name_mentions_with_spans() -> None:
    text = "Roald Amundsen sailed from the Bay of Whales with Helmer Hanssen."
    (extraction,) = RegexExtractor().extract([text])
    found = [(m.key, m.label, text[m.start : m.end]) for m in extraction.mentions]
    assert found == [
        ("roald amundsen", NAME_LABEL, "Roald Amundsen"),
        ("bay of whales", NAME_LABEL, "Bay of Whales"),
        ("helmer hanssen", NAME_LABEL, "Helmer Hanssen"),
    ]


def test_sentence_initial_function_words_are_not_part_of_a_name() -> None:
    (extraction,) = RegexExtractor().extract(["The Fram wintered. In Oslo it was cold."])
    assert [(m.key, m.sentence) for m in extraction.mentions] == [("fram", 0), ("oslo", 1)]


def test_a_sentence_initial_word_seen_in_lower_case_is_not_a_name() -> None:
    (extraction,) = RegexExtractor().extract(["Dogs pulled the sledges. The dogs were tired."])
    assert extraction.mentions == ()


def test_bigrams_are_kept_only_when_frequent_in_the_batch() -> None:
    texts = ["They heated copper sulfate crystals.", "Dry copper sulfates turn white.", "Hot tea."]
    extractions = RegexExtractor().extract(texts)
    assert [[m.key for m in e.mentions if m.label == PHRASE_LABEL] for e in extractions] == [
        ["copper sulfate"],
        ["copper sulfate"],
        [],
    ]
    alone = RegexExtractor().extract(texts[:1])
    assert alone[0].mentions == ()


def test_the_same_batch_always_gives_the_same_mentions() -> None:
    texts = ["Marie Curie isolated Radium.", "Pierre Curie measured Radium samples."]
    assert RegexExtractor().extract(texts) == RegexExtractor().extract(texts)


def test_the_regex_extractor_satisfies_the_extractor_protocol() -> None:
    assert isinstance(RegexExtractor(), Extractor)
    assert RegexExtractor(3).identity != RegexExtractor(2).identity
