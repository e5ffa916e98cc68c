"""§8 filters compiled to Solr ``fq`` mean what ``matches`` means (issue 48).

Chunks with varied metadata (strings, numbers, dates, booleans, arrays, absent
fields, text with quotes and wildcard characters) go into a fresh collection of
the session's SolrCloud as the store writes them (``solr_filter_fields``); for
every filter below, the keys Solr returns through the store's index are exactly
those whose metadata the Python evaluator accepts.
"""

from __future__ import annotations

from typing import Any

import pytest

from rcpkit.engine.filters import OPERATORS, matches, normalize_meta, parse_filter
from rcpkit.engine.filters import solr_filter_fields as filter_fields
from rcpkit.engine.store.solr.collection import Collection, parse_url
from rcpkit.engine.store.solr.http import SolrHttp
from rcpkit.engine.store.solr.reads import SolrIndex
from rcpkit.engine.store.solr.rows import tenant_value

pytestmark = pytest.mark.timeout(600)

FIELDS: dict[str, Any] = {
    "path": "text", "tag": "keyword", "lang": "keyword", "year": "int",
    "score": "float", "date": "date", "draft": "bool", "odd name/é": "keyword",
}  # fmt: skip
ARRAYS = ("tag",)
METAS: list[dict[str, Any]] = [
    {"path": "docs/a*b.md", "tag": ["x", "y"], "lang": "en", "year": 1990, "score": 0.5,
     "date": "2020-01-02", "draft": True, "odd name/é": "v"},
    {"path": 'docs/"quoted".md', "tag": ["y"], "lang": "fr", "year": 2001, "score": 2.5},
    {"path": "src/main.py", "tag": [], "lang": "EN", "year": 2015, "draft": False},
    {"path": "src/a?c.py", "lang": "en", "date": "2024-06-30T10:00:00Z"},
    {"tag": ["x"], "year": 2001, "score": -1.0, "odd name/é": "w"},
    {},
]  # fmt: skip
FILTERS: list[dict[str, Any]] = [
    {"field": "lang", "op": "eq", "value": "en"},
    {"field": "lang", "op": "ne", "value": "en"},
    {"field": "lang", "op": "in", "value": ["fr", "EN"]},
    {"field": "lang", "op": "nin", "value": ["fr", "EN"]},
    {"field": "tag", "op": "contains", "value": "x"},
    {"field": "tag", "op": "in", "value": ["y"]},
    {"field": "tag", "op": "exists", "value": True},
    {"field": "tag", "op": "exists", "value": False},
    {"field": "year", "op": "gt", "value": 2001},
    {"field": "year", "op": "gte", "value": 2001},
    {"field": "year", "op": "lt", "value": 2001},
    {"field": "year", "op": "lte", "value": 2001},
    {"field": "score", "op": "gte", "value": 0.5},
    {"field": "year", "op": "eq", "value": 2001},
    {"field": "date", "op": "gte", "value": "2021-01-01"},
    {"field": "draft", "op": "eq", "value": False},
    {"field": "draft", "op": "ne", "value": True},
    {"field": "path", "op": "contains", "value": "a*b"},
    {"field": "path", "op": "contains", "value": '"quoted"'},
    {"field": "path", "op": "contains", "value": "a?c"},
    {"field": "path", "op": "contains", "value": "docs/"},
    {"field": "odd name/é", "op": "eq", "value": "v"},
    {"and": [{"field": "lang", "op": "eq", "value": "en"},
             {"field": "year", "op": "lt", "value": 2000}]},
    {"or": [{"field": "lang", "op": "eq", "value": "fr"},
            {"not": {"field": "tag", "op": "exists", "value": True}}]},
    {"not": {"or": [{"field": "year", "op": "gte", "value": 2001},
                    {"field": "draft", "op": "eq", "value": True}]}},
]  # fmt: skip


def test_every_filter_selects_what_the_evaluator_selects(solr_url: str) -> None:
    bases, name = parse_url(solr_url)
    collection = Collection(SolrHttp(bases), name)
    normalized = [normalize_meta(meta, FIELDS) for meta in METAS]
    documents = [
        {"id": str(key), "kind": "chunk", "key": key, "tenant": tenant_value(None),
         **filter_fields(meta)}
        for key, meta in enumerate(normalized, start=1)
    ]  # fmt: skip
    collection.update(documents, commit=True)
    index = SolrIndex(collection)
    for raw in FILTERS:
        tree = parse_filter(raw, FIELDS, OPERATORS, array_fields=ARRAYS)
        expected = [key for key, meta in enumerate(normalized, start=1) if matches(tree, meta)]
        assert index.filtered_keys(tree).tolist() == expected, raw
