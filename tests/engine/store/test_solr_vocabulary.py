"""SolrCloud's vocabulary is asked for the words wanted, never listed whole (issue 48).

Query rewriting needs the most frequent words (its spelling index) and the document
frequency of a few others; ``memory/build`` the frequencies of its texts' words. Over
a million chunks the whole vocabulary is millions of facet buckets, so the Solr store
answers each of these with a facet limited to them. Checked here against the complete
facet (``store.vocabulary()``, what every caller read before) on the session's cloud.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import rcpkit
from rcpkit.engine.config import EngineConfig
from rcpkit.engine.engine import Engine
from rcpkit.engine.open import open_engine
from rcpkit.engine.transform.rewriter import Rewriter
from rcpkit.library._request import LocalRequest

pytestmark = pytest.mark.timeout(900)

HASHING = "hashing:64"
# df: plate 5, flow 4, boundary 2, plane 1 (one edit from plate), shock 1.
TEXTS = [
    "flow over a flat plate",
    "laminar flow along the plate",
    "turbulent flow near the plate edge",
    "boundary layer flow on a heated plate",
    "boundary conditions at the plate surface",
    "a plane shock",
]


@pytest.fixture
def engine(solr_url: str, tmp_path: Path) -> Iterator[Engine]:
    with rcpkit.open(solr_url, embedder=HASHING) as index:
        index.add([{"id": f"d{n}", "text": text} for n, text in enumerate(TEXTS)])
    opened = open_engine(EngineConfig(index=tmp_path / "cache", store=solr_url, embedder=HASHING))
    try:
        yield opened
    finally:
        opened.close()


def test_the_most_frequent_words_and_given_words_frequencies_match_the_whole_facet(
    engine: Engine,
) -> None:
    whole = dict(engine.store.vocabulary())
    assert (whole["plate"], whole["flow"], whole["plane"]) == (5, 4, 1)
    vocabulary = engine.backend.vocabulary
    top = vocabulary.frequent(2)
    assert (top.words, top.complete) == ([("plate", 5), ("flow", 4)], False)
    everything = vocabulary.frequent(len(whole) + 1)
    assert everything.complete and dict(everything.words) == whole
    asked = vocabulary.frequencies(["flow", "plane", "absent", "com,ma", "back\\slash"])
    assert asked == {"flow": 4, "plane": 1}  # absent words left out, as a table's lookup
    assert vocabulary.frequencies(["flow"], tenant="someone-else") == {}


def test_a_rare_word_outside_the_spelling_index_is_asked_for_and_not_corrected(
    engine: Engine,
) -> None:
    # Two words indexed: "plane" (df 1) is not among them; were its df taken as 0 it
    # would be a misspelling of "plate", one edit away.
    rewriter = Rewriter(engine.store, engine.backend.vocabulary, lambda *_: [], indexed_words=2)
    assert rewriter.run("rewrite", "plane flow", None, LocalRequest()).rewritten == "plane flow"
    assert rewriter.run("rewrite", "plote flow", None, LocalRequest()).rewritten == "plate flow"
