from __future__ import annotations

import pytest

from rcpkit.protocol import ErrorCode, RCPError
from rcpkit.protocol.content import Content
from rcpkit.protocol.messages import EmbedParams, RerankParams, RetrieveParams
from rcpkit.protocol.validation import clamp, parse_params


def field_of(params_type: type, raw: dict) -> str | None:
    with pytest.raises(RCPError) as caught:
        parse_params(params_type, raw)
    assert caught.value.code == ErrorCode.INVALID_PARAMS
    return caught.value.field


def test_explicit_null_is_treated_as_absent() -> None:
    params = parse_params(RetrieveParams, {"query": "q", "k": None, "fusion": {"rrfK": None}})
    assert params.k == 10
    assert params.fusion is not None
    assert params.fusion.rrf_k is None


def test_unknown_fields_and_meta_are_ignored() -> None:
    params = parse_params(RetrieveParams, {"query": "q", "x-acme": 1, "_meta": {"a": 1}})
    assert params.query == "q"


@pytest.mark.parametrize("bad", [True, 1.0, 2.5, "3", 0, -1])
def test_a_count_must_be_a_positive_integer(bad: object) -> None:
    assert field_of(RetrieveParams, {"query": "q", "k": bad}) == "k"


def test_huge_integers_validate_so_they_can_be_clamped() -> None:
    params = parse_params(RetrieveParams, {"query": "q", "k": 10**30})
    assert clamp(params.k, 200) == 200


def test_the_offending_nested_path_is_named() -> None:
    assert field_of(RetrieveParams, {"query": "q", "fusion": {"alpha": 2}}) == "fusion.alpha"
    assert field_of(RetrieveParams, {"query": {"type": "video"}}) == "query.type"
    assert field_of(RetrieveParams, {"query": "q", "mmr": {"lambda": "x"}}) == "mmr.lambda"


def test_a_missing_required_field_is_named_with_its_path() -> None:
    assert field_of(RetrieveParams, {"k": 3}) == "query"
    assert field_of(RetrieveParams, {"query": "q", "recency": {"halfLifeDays": 3}}) == (
        "recency.field"
    )


def test_error_messages_carry_no_library_names() -> None:
    with pytest.raises(RCPError) as caught:
        parse_params(RetrieveParams, {"query": "q", "k": "ten"})
    assert "msgspec" not in caught.value.message
    assert "$" not in caught.value.message


def test_content_blocks_enforce_data_xor_uri_and_mime_type() -> None:
    assert field_of(RetrieveParams, {"query": {"type": "text"}}) == "query"
    assert field_of(RetrieveParams, {"query": {"type": "image", "data": "AA=="}}) == "query"
    both = {"type": "image", "mimeType": "image/png", "data": "AA==", "uri": "https://x"}
    assert field_of(RetrieveParams, {"query": both}) == "query"
    params = parse_params(RetrieveParams, {"query": [{"type": "text", "text": "a"}]})
    assert params.query == [Content(type="text", text="a")]


def test_rerank_true_is_rejected_but_false_switches_it_off() -> None:
    assert field_of(RetrieveParams, {"query": "q", "rerank": True}) == "params"
    assert parse_params(RetrieveParams, {"query": "q", "rerank": False}).rerank is False


def test_embed_accepts_the_legacy_texts_field() -> None:
    assert parse_params(EmbedParams, {"texts": ["a"]}).items == ["a"]
    assert parse_params(EmbedParams, {"inputs": ["b"]}).items == ["b"]
    assert field_of(EmbedParams, {"kind": "query"}) == "params"


def test_rerank_accepts_documents_as_a_synonym_of_passages() -> None:
    assert parse_params(RerankParams, {"query": "q", "documents": ["d"]}).items == ["d"]
