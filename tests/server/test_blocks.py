"""§4.8: every Content-taking params field of the registry refuses a uri and unadvertised blocks."""

from __future__ import annotations

from typing import Any

import pytest

from rcpkit.server.app import App
from rcpkit.server.blocks import registry_content_fields
from support import running

TEXT_URI = {"type": "text", "text": "t", "uri": "https://example.com/t"}
IMAGE = {"type": "image", "mimeType": "image/png", "data": "AAAA"}

# Minimal valid params per method; a new Content-taking method fails here until added.
BASE: dict[str, dict[str, Any]] = {
    "embed": {},
    "embed/sparse": {},
    "embed/multi": {},
    "rerank": {"query": "q", "passages": ["a"]},
    "retrieve": {"query": "q"},
    "query/transform": {"query": "q", "method": "rewrite"},
    "graph": {"op": "local"},
    "memory/recall": {"query": "q"},
    "index/add": {},
}

FIELDS = [
    (method, field) for method, fields in registry_content_fields().items() for field in fields
]


def _every_method_app() -> App:
    app = App("all", "1")
    done: dict[str, Any] = {}
    app.embed(dimension=2, identity="toy")(lambda p: done)
    app.embed_sparse(identity="toy")(lambda p: done)
    app.embed_multi(dimension=2, identity="toy")(lambda p: done)
    app.rerank(methods=["colbert"])(lambda p: done)
    app.retrieve(max_k=10, modes=["sparse"])(lambda p: done)
    app.query_transform(methods=["rewrite"])(lambda p: done)
    app.graph(ops=["local"])(lambda p: done)
    app.memory_recall(scopes=["global"])(lambda p: done)
    app.index_add(writable=True)(lambda p: done)
    return app


def _shaped(method: str, field: str, block: dict[str, Any]) -> dict[str, Any]:
    if method == "index/add":  # §4.8: a document body as Content blocks
        return {field: [{"id": "d", "content": [block]}]}
    return {**BASE[method], field: block if field == "query" else [block]}


def _path(method: str, field: str) -> str:
    if method == "index/add":
        return "documents[0].content[0]"
    return field if field == "query" else f"{field}[0]"


def test_the_registry_names_every_content_field_we_know_of() -> None:
    assert set(FIELDS) >= {
        ("retrieve", "query"),
        ("embed", "inputs"),
        ("embed", "texts"),
        ("rerank", "query"),
        ("rerank", "passages"),
        ("query/transform", "query"),
        ("memory/recall", "query"),
        ("graph", "query"),
        ("index/add", "documents"),  # documents[].content; documents[].uri is provenance
    }


@pytest.mark.parametrize(("method", "field"), FIELDS)
async def test_a_uri_block_is_invalid_params_naming_it(method: str, field: str) -> None:
    async with running(_every_method_app()) as peer:
        reply = await peer.request(1, method, _shaped(method, field, TEXT_URI))
    assert (reply["error"]["code"], reply["error"]["data"]["field"]) == (
        -32602,
        _path(method, field),
    )


@pytest.mark.parametrize(("method", "field"), FIELDS)
async def test_an_image_block_on_a_text_only_capability_is_option_unsupported(
    method: str, field: str
) -> None:
    async with running(_every_method_app()) as peer:
        reply = await peer.request(1, method, _shaped(method, field, IMAGE))
    assert (reply["error"]["code"], reply["error"]["data"]["option"]) == (-32005, "modality")


async def test_an_image_block_is_accepted_where_the_image_modality_is_advertised() -> None:
    app = App("img", "1")
    app.embed(dimension=2, identity="toy", modalities=["text", "image"])(
        lambda p: {"vectors": [[0.0, 1.0]]}
    )
    async with running(app) as peer:
        reply = await peer.request(1, "embed", {"inputs": [IMAGE]})
    assert reply["result"]["vectors"] == [[0.0, 1.0]]
