"""Code as its own modality through the RCP surface: symbol paths, lang, modality filter."""

from __future__ import annotations

import pytest
from engine_support import Calls, serving

from rcpkit.engine.engine import Engine
from rcpkit.handlers.engine import build_engine_app
from support import running

pytest.importorskip("tree_sitter_language_pack")

SOURCE = """import re


def parse_filter(text):
    return re.split(",", text)


class Planner:
    def planQuery(self, query):
        return query.strip()
"""
PROSE = "The planner chooses a query plan; a filter is parsed before planning."


async def test_a_code_chunk_is_found_by_its_identifier_or_its_words(engine: Engine) -> None:
    async with serving(engine) as peer:
        call = Calls(peer)
        documents = [
            {"id": "lib.py", "text": SOURCE, "modality": "code", "uri": "file:///src/lib.py"},
            {"id": "notes", "text": PROSE},
        ]
        await call.result("index/add", {"documents": documents})
        found = {}
        for query in ("parse_filter", "parse filter", "planQuery", "plan query"):
            result = await call.result("retrieve", {"query": query, "k": 5, "mode": "sparse"})
            found[query] = result["hits"]
        code_only = await call.result(
            "retrieve",
            {
                "query": "query plan filter",
                "k": 5,
                "mode": "sparse",
                "filter": {"field": "modality", "op": "eq", "value": "code"},
            },
        )
        by_lang = await call.result(
            "retrieve",
            {
                "query": "planner",
                "k": 5,
                "mode": "hybrid",
                "filter": {"field": "lang", "op": "eq", "value": "python"},
            },
        )
    top = {query: hits[0] for query, hits in found.items()}
    # An identifier names its own chunk first; its words find it beside the prose.
    assert top["parse_filter"]["chunk"]["context"] == "parse_filter\n"
    assert top["planQuery"]["chunk"]["context"] == "Planner › planQuery\n"
    assert all(hit["modality"] == "code" for hit in (top["parse_filter"], top["planQuery"]))
    contexts = {
        query: [hit["chunk"].get("context") for hit in hits] for query, hits in found.items()
    }
    assert "parse_filter\n" in contexts["parse filter"]
    assert "Planner › planQuery\n" in contexts["plan query"]
    assert code_only["hits"] and {hit["chunk"]["docId"] for hit in code_only["hits"]} == {"lib.py"}
    assert by_lang["hits"] and all(hit["meta"]["lang"] == "python" for hit in by_lang["hits"])


async def test_prose_that_names_a_snake_case_identifier_is_found_by_it(engine: Engine) -> None:
    # A prose row holds "parse_filter" as prose analyses it, "parse_filt" (the index's
    # tokens "parse", "filt"), none of the code analyzer's "parsefilt", "pars",
    # "filter": the query must carry that form too.
    documents = [
        {"id": "howto", "text": "Call parse_filter once for every option of the tool."},
        {"id": "words", "text": "Parse a filter for every option of the tool."},
        {"id": "other", "text": "An unrelated note about the weather in spring."},
    ]
    async with serving(engine) as peer:
        call = Calls(peer)
        await call.result("index/add", {"documents": documents})
        result = await call.result("retrieve", {"query": "parse_filter", "k": 5, "mode": "sparse"})
    found = {hit["chunk"]["docId"] for hit in result["hits"]}
    assert found == {"howto", "words"}  # the identifier's prose form, and its words


async def test_retrieve_advertises_code_and_modality_as_a_filter_field(engine: Engine) -> None:
    async with running(build_engine_app(engine), initialize=False) as peer:
        reply = await peer.request("init", "initialize", {"protocolVersion": 1})
    capabilities = reply["result"]["capabilities"]
    assert "code" in capabilities["retrieve"]["modalities"]
    assert capabilities["filter"]["fields"]["modality"] == "keyword"
