"""The in-memory keyword engine takes a document body given as text blocks (§4.8)."""

from __future__ import annotations

from rcpkit.engine.keyword import KeywordIndex
from rcpkit.handlers.keyword import build_keyword_app
from support import running


async def test_text_blocks_are_the_body_and_an_image_block_is_option_unsupported() -> None:
    content = [
        {"type": "text", "text": "Reciprocal rank fusion"},
        {"type": "text", "text": "merges"},
    ]
    image = {"type": "image", "mimeType": "image/png", "data": "AAAA"}
    async with running(build_keyword_app(KeywordIndex())) as peer:
        added = await peer.request(1, "index/add", {"documents": [{"id": "d", "content": content}]})
        found = await peer.request(2, "retrieve", {"query": "rank fusion merges", "k": 1})
        refused = await peer.request(
            3, "index/add", {"documents": [{"id": "i", "content": [image]}]}
        )
        empty = await peer.request(4, "index/add", {"documents": [{"id": "e"}]})
    assert added["result"]["ids"] == ["d"]
    assert found["result"]["hits"][0]["text"] == "Reciprocal rank fusion\n\nmerges"
    assert (refused["error"]["code"], refused["error"]["data"]["option"]) == (-32005, "modality")
    assert (empty["error"]["code"], empty["error"]["data"]["field"]) == (
        -32602,
        "documents[0].text",
    )
