"""The identifier-aware analyzer: code terms split, prose terms exactly as before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rcpkit.engine.scoring.bm25 import query_weights
from rcpkit.engine.text.analysis import (
    Part,
    analyze,
    analyze_code_many,
    analyze_many,
    analyze_query,
    identifier_parts,
)

CRANFIELD = Path("/work/shared/datasets/cranfield/corpus.jsonl")


def test_snake_and_camel_case_identifiers_give_their_whole_form_and_their_parts() -> None:
    assert analyze_code_many(["parse_filter"]) == [["parsefilt", "pars", "filter"]]
    assert analyze_query("parseFilter") == ["parsefilt", "pars", "filter"]
    # A query's snake_case word is also kept whole, as a prose row holds it.
    assert analyze_query("parse_filter") == ["parse_filt", "parsefilt", "pars", "filter"]
    assert identifier_parts("HTTPServer2") == ["HTTP", "Server", "2"]


def test_an_identifiers_parts_in_a_query_weigh_one_term_together() -> None:
    # Issue 50: the parts are one word's evidence, not n more words; the index's terms
    # and a word's weight are as before.
    assert query_weights(analyze_query("PostgreSQL database")) == {
        "postgresql": 1.0, "postgr": 0.5, "sql": 0.5, "databas": 1.0}  # fmt: skip
    weights = query_weights(analyze_query("HTTPServer sql"))
    assert weights["sql"] == 1.0 and weights["http"] == weights["server"] == 0.5
    assert analyze_code_many(["PostgreSQL"]) == [["postgresql", "postgr", "sql"]]
    assert not any(isinstance(term, Part) for term in analyze_code_many(["PostgreSQL"])[0])


def test_a_query_naming_an_identifier_or_its_words_meets_the_code_terms() -> None:
    (code,) = analyze_code_many(["def parse_filter(text):\n    return text"])
    for query in ("parse_filter", "parse filter", "parseFilter"):
        assert set(analyze_code_many([query])[0]) <= set(code)
        assert set(analyze_code_many([query])[0]) <= set(analyze_query(query))


def test_a_query_naming_an_identifier_meets_it_in_prose_too() -> None:
    prose = analyze("Call parse_filter on the text first.")
    assert "parse_filt" in set(analyze_query("parse_filter")) & set(prose)


def test_prose_words_that_look_camel_cased_are_left_alone() -> None:
    prose = "The iPhone at McDonald's and a PhD thesis"
    assert analyze_query(prose) == analyze(prose)


@pytest.mark.skipif(not CRANFIELD.exists(), reason="the Cranfield corpus is not on this host")
def test_on_a_real_prose_corpus_the_code_analyzer_changes_nothing() -> None:
    texts = []
    with CRANFIELD.open(encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            texts.append(f"{row.get('title', '')}\n{row['text']}")
    assert analyze_code_many(texts) == analyze_many(texts)
