"""A repeated query term weighs ``1 + ln(c)``, and an identifier's part ``1 / n``, over Solr as
on every other lexical path (issue 50): the same BM25 term score, multiplied by the query's
weight for it."""

from __future__ import annotations

import math

import pytest

from rcpkit.engine.store.solr.collection import Collection, parse_url
from rcpkit.engine.store.solr.http import SolrHttp
from rcpkit.engine.store.solr.reads import SolrIndex
from rcpkit.engine.store.solr.rows import tenant_value
from rcpkit.engine.text.analysis import Part

pytestmark = pytest.mark.timeout(600)

TERMS = {1: "valv|1 flow|2", 2: "flow|1 pump|1", 3: "pump|3 valv|1 seal|1"}


def test_a_term_twice_in_the_query_weighs_one_plus_ln_two_on_every_row(solr_url: str) -> None:
    bases, name = parse_url(solr_url)
    collection = Collection(SolrHttp(bases), name)
    collection.update(
        [
            {"id": str(key), "kind": "chunk", "key": key, "tenant": tenant_value(None),
             "terms": terms, "length": len(terms.split())}
            for key, terms in TERMS.items()
        ],
        commit=True,
    )  # fmt: skip
    index = SolrIndex(collection)
    valve = dict(index.lexical(["valv"], 10))
    pump = dict(index.lexical(["pump"], 10))
    once = dict(index.lexical(["valv", "pump"], 10))
    twice = dict(index.lexical(["valv", "pump", "pump"], 10))
    assert set(once) == set(twice) == {1, 2, 3}
    for key in once:
        expected = valve.get(key, 0.0) + (1 + math.log(2)) * pump.get(key, 0.0)
        assert twice[key] == pytest.approx(expected, rel=1e-5)
    assert index.lexical_of(["valv", "pump", "pump"], [3]) == {3: pytest.approx(twice[3])}
    # An identifier's parts (issue 50) weigh 1/n each over Solr too.
    half = Part.of_word("valv", 2)
    parted = dict(index.lexical([half, "pump"], 10))
    for key in once:
        assert parted[key] == pytest.approx(valve.get(key, 0.0) / 2 + pump.get(key, 0.0), rel=1e-5)
