"""Option gating (§7.7 `strict`, §12 -32005) and limit clamping (§3.3, §7.7, §12).

Runs after params validation and before the handler, against the advertised
capabilities, so every handler sees only options it declared it supports.
With ``strict: false`` an unsupported retrieve option is dropped and the
fallback is noted (the handler echoes ``ctx.notes`` in ``usage.notes``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import msgspec

from rcpkit.protocol import messages as m
from rcpkit.protocol.capabilities import Capabilities
from rcpkit.protocol.errors import RCPError
from rcpkit.server.blocks import check_blocks

__all__ = ["check_funnel", "check_options"]

Checker = Callable[[Any, Capabilities, list[str]], Any]


def check_options(
    method: str,
    params: Any,
    capabilities: Capabilities,
    notes: list[str],
    unavailable: Mapping[str, str] | None = None,
    fetchable: Sequence[str] = (),
) -> Any:
    """Reject (-32005) or degrade unsupported options; clamp over-limit counts.

    ``unavailable``: modality -> why it is not offered, named in a -32005 (§4.8);
    ``fetchable``: the URI prefixes a block's ``uri`` may name.
    """
    check_blocks(method, params, capabilities, unavailable, fetchable)  # §4.8: every Content field
    checker = _CHECKERS.get(method)
    return params if checker is None else checker(params, capabilities, notes)


def _unsupported(option: str, value: object) -> RCPError:
    return RCPError.option_unsupported(option, f"`{option}` {value!r} is not advertised")


def _check_embed(params: m.EmbedParams, caps: Capabilities, _notes: list[str]) -> m.EmbedParams:
    cap = caps.embed
    assert cap is not None
    _check_encoding(params.encoding, cap.encodings)
    # §15.5: batchLimit is enforced; clamping an input list is impossible.
    if cap.batch_limit is not None and len(params.items) > cap.batch_limit:
        raise RCPError.invalid_params(
            "inputs", f"{len(params.items)} inputs exceed embed.batchLimit {cap.batch_limit}"
        )
    return params


def _check_multi(
    params: m.MultiEmbedParams, caps: Capabilities, _notes: list[str]
) -> m.MultiEmbedParams:
    cap = caps.multi_vector
    assert cap is not None
    _check_encoding(params.encoding, cap.encodings)
    return params


def _check_sparse(
    params: m.SparseEmbedParams, _caps: Capabilities, _notes: list[str]
) -> m.SparseEmbedParams:
    return params


def _check_encoding(encoding: str | None, advertised: Sequence[str] | None) -> None:
    # §7.3.1: "json" is always supported; anything else must be advertised.
    if encoding not in (None, "json") and encoding not in (advertised or []):
        raise _unsupported("encoding", encoding)


def _check_rerank(params: m.RerankParams, caps: Capabilities, _notes: list[str]) -> m.RerankParams:
    cap = caps.rerank
    assert cap is not None
    if params.method is not None and params.method not in cap.methods:
        raise _unsupported("method", params.method)
    if cap.max_candidates is not None and len(params.items) > cap.max_candidates:
        raise RCPError.invalid_params(
            "passages",
            f"{len(params.items)} passages exceed rerank.maxCandidates {cap.max_candidates}",
        )
    return params


def _check_transform(
    params: m.TransformParams, caps: Capabilities, _notes: list[str]
) -> m.TransformParams:
    assert caps.transform is not None
    if params.method not in caps.transform.methods:
        raise _unsupported("method", params.method)
    return params


def _check_graph(params: m.GraphParams, caps: Capabilities, notes: list[str]) -> m.GraphParams:
    cap = caps.graph
    assert cap is not None
    if params.op not in cap.ops:
        raise _unsupported("op", params.op)
    if params.cursor is not None and caps.pagination is None:
        raise _unsupported("cursor", "pagination")
    if params.hops is not None and cap.max_hops is not None and params.hops > cap.max_hops:
        notes.append(f"hops clamped to {cap.max_hops}")
        params = msgspec.structs.replace(params, hops=cap.max_hops)
    return params


def _check_memory(
    params: m.MemoryBuildParams, caps: Capabilities, _notes: list[str]
) -> m.MemoryBuildParams:
    assert caps.memory is not None
    if params.scope is not None and params.scope not in caps.memory.scopes:
        raise _unsupported("scope", params.scope)
    return params


def _check_index_add(
    params: m.IndexAddParams, caps: Capabilities, _notes: list[str]
) -> m.IndexAddParams:
    cap = caps.index
    assert cap is not None
    if params.chunk and not cap.chunking:
        raise _unsupported("chunk", True)
    if params.contextual and not cap.contextual:
        raise _unsupported("contextual", True)
    return params


def _check_retrieve(
    params: m.RetrieveParams, caps: Capabilities, notes: list[str]
) -> m.RetrieveParams:
    cap = caps.retrieve
    assert cap is not None
    check_funnel(params)
    strict = params.strict is not False
    changes: dict[str, Any] = {}

    def refuse(option: str, value: object, fallback: object = None) -> None:
        # §7.7: -32005 unless strict:false, then fall back and say so.
        wire = "tokenBudget" if option == "token_budget" else option
        if strict:
            raise _unsupported(wire, value)
        changes[option] = fallback
        notes.append(f"{wire} {value!r} not supported; ignored")

    if params.mode is not None and params.mode not in (cap.modes or []):
        refuse("mode", params.mode)
    fusion = params.fusion
    if fusion is not None and fusion.method is not None and fusion.method not in (cap.fusion or []):
        refuse("fusion", fusion.method)
    rerank = params.rerank
    if isinstance(rerank, m.RerankOption):
        methods = caps.rerank.methods if caps.rerank is not None else []
        if not cap.rerank_builtin:
            refuse("rerank", "builtin", False)
        elif rerank.method is not None and rerank.method not in methods:
            refuse("rerank", rerank.method, False)
    if params.mmr is not None and not cap.mmr:
        refuse("mmr", "mmr")
    if params.recency is not None and not cap.recency:
        refuse("recency", "recency")
    if params.token_budget is not None and not cap.token_budget:
        refuse("token_budget", params.token_budget)
    if params.unit is not None and params.unit not in (cap.units or ["chunk", "passage"]):
        refuse("unit", params.unit)
    if isinstance(params.rewrite, str) and (
        caps.transform is None or params.rewrite not in caps.transform.methods
    ):
        refuse("rewrite", params.rewrite)
    if params.filter is not None and caps.filter is None:
        refuse("filter", "filter")
    if params.cursor is not None and caps.pagination is None:
        refuse("cursor", "pagination")
    if params.encoding not in (None, "json") and params.encoding not in (cap.encodings or []):
        refuse("encoding", params.encoding)
    if params.modality is not None and params.modality not in (cap.modalities or ["text"]):
        refuse("modality", params.modality)
    if changes:
        params = msgspec.structs.replace(params, **changes)
    return _clamp_funnel(params, caps, notes)


def check_funnel(params: m.RetrieveParams) -> None:
    """§3.3, §7.7: the request MUST satisfy ``candidateK >= rerank.topN >= k``.

    Checked on the counts as sent, before any clamping (a MUST on the request,
    so -32602 naming the knob that breaks it); clamping to the advertised
    limits (§12) comes after and never turns a valid request into an error.
    """
    k = params.k
    top_n = params.rerank.top_n if isinstance(params.rerank, m.RerankOption) else None
    if top_n is not None and top_n < k:
        raise RCPError.invalid_params(
            "rerank.topN", f"rerank.topN {top_n} is below k {k} (candidateK >= topN >= k)"
        )
    candidate_k = params.candidate_k
    if candidate_k is None:
        return
    floor, knob = (top_n, "rerank.topN") if top_n is not None else (k, "k")
    if candidate_k < floor:
        raise RCPError.invalid_params(
            "candidateK",
            f"candidateK {candidate_k} is below {knob} {floor} (candidateK >= topN >= k)",
        )


def _clamp_funnel(
    params: m.RetrieveParams, caps: Capabilities, notes: list[str]
) -> m.RetrieveParams:
    """§7.7, §12: clamp each count to maxK / maxCandidates, keeping the funnel.

    The request already satisfies the funnel (``check_funnel``); only a clamp can
    break it, and then the wider stage is lowered, never a limit exceeded.
    """
    assert caps.retrieve is not None
    max_k = caps.retrieve.max_k
    max_candidates = caps.rerank.max_candidates if caps.rerank is not None else None
    k = params.k
    if max_k is not None and k > max_k:
        notes.append(f"k clamped to maxK {max_k}")
        k = max_k
    candidate_k = params.candidate_k
    if candidate_k is not None and max_k is not None and candidate_k > max_k:
        notes.append(f"candidateK clamped to maxK {max_k}")
        candidate_k = max_k
    rerank = params.rerank
    if isinstance(rerank, m.RerankOption) and rerank.top_n is not None:
        top_n = rerank.top_n
        if max_candidates is not None and top_n > max_candidates:
            notes.append(f"rerank.topN clamped to maxCandidates {max_candidates}")
            top_n = max_candidates
        if candidate_k is not None and top_n > candidate_k:
            notes.append(f"rerank.topN lowered to candidateK {candidate_k} after clamping")
            top_n = candidate_k
        if k > top_n:
            notes.append(f"k lowered to rerank.topN {top_n} after clamping")
            k = top_n
        rerank = msgspec.structs.replace(rerank, top_n=top_n)
    if (k, rerank, candidate_k) == (params.k, params.rerank, params.candidate_k):
        return params
    return msgspec.structs.replace(params, k=k, rerank=rerank, candidate_k=candidate_k)


_CHECKERS: dict[str, Checker] = {
    "embed": _check_embed,
    "embed/sparse": _check_sparse,
    "embed/multi": _check_multi,
    "rerank": _check_rerank,
    "retrieve": _check_retrieve,
    "query/transform": _check_transform,
    "graph": _check_graph,
    "memory/build": _check_memory,
    "index/add": _check_index_add,
}
