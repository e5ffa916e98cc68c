"""The method registry: method → (params type, result type, gating capability).

This table is the single source of truth for method names. Gating, params
validation, the decorator API and the client all read it.
"""

from __future__ import annotations

from dataclasses import dataclass

from rcpkit.protocol import messages as m
from rcpkit.protocol.base import Wire

__all__ = ["METHODS", "NOTIFICATIONS", "MethodSpec", "NotificationSpec", "by_python_name"]


@dataclass(frozen=True, slots=True)
class MethodSpec:
    """One RCP method of §7."""

    name: str
    params: type[Wire]
    result: type[Wire]
    # §7: the capability key that gates the method; None for lifecycle methods.
    capability: str | None
    # §13: info, ping and shutdown are callable before initialize.
    before_initialize: bool = False
    # §9: whether the method may emit progress (streams over SSE).
    streams: bool = False
    # §13.1: a write that must not be retried blindly without an id or key.
    writes: bool = False
    # The spec section that defines the method (``7.7`` for retrieve), for docs.
    section: str = ""

    @property
    def python_name(self) -> str:
        """``index/add`` → ``index_add``: the name of the decorator and client method."""
        return self.name.replace("/", "_")


@dataclass(frozen=True, slots=True)
class NotificationSpec:
    name: str
    params: type[Wire]


_SPECS = (
    MethodSpec(
        "initialize",
        m.InitializeParams,
        m.InitializeResult,
        None,
        before_initialize=True,
        section="7.1",
    ),
    MethodSpec(
        "info", m.InfoParams, m.InitializeResult, None, before_initialize=True, section="7.2"
    ),
    MethodSpec("ping", m.PingParams, m.PingResult, None, before_initialize=True, section="7.15"),
    MethodSpec(
        "shutdown", m.ShutdownParams, m.EmptyResult, None, before_initialize=True, section="7.12"
    ),
    MethodSpec("embed", m.EmbedParams, m.EmbedResult, "embed", section="7.3"),
    MethodSpec(
        "embed/sparse", m.SparseEmbedParams, m.SparseEmbedResult, "sparseEmbed", section="7.4"
    ),
    MethodSpec("embed/multi", m.MultiEmbedParams, m.MultiEmbedResult, "multiVector", section="7.5"),
    MethodSpec("rerank", m.RerankParams, m.RerankResult, "rerank", streams=True, section="7.6"),
    MethodSpec(
        "retrieve", m.RetrieveParams, m.RetrieveResult, "retrieve", streams=True, section="7.7"
    ),
    MethodSpec("query/transform", m.TransformParams, m.TransformResult, "transform", section="7.8"),
    MethodSpec("graph", m.GraphParams, m.GraphResult, "graph", streams=True, section="7.9"),
    MethodSpec(
        "index/add",
        m.IndexAddParams,
        m.IndexAddResult,
        "index",
        streams=True,
        writes=True,
        section="7.10",
    ),
    MethodSpec(
        "index/delete",
        m.IndexDeleteParams,
        m.IndexDeleteResult,
        "index",
        writes=True,
        section="7.11",
    ),
    MethodSpec("catalog/list", m.CatalogListParams, m.CatalogListResult, "catalog", section="7.13"),
    MethodSpec("feedback", m.FeedbackParams, m.FeedbackResult, "feedback", section="7.16"),
    MethodSpec(
        "memory/build",
        m.MemoryBuildParams,
        m.MemoryBuildResult,
        "memory",
        writes=True,
        section="7.17",
    ),
    MethodSpec(
        "memory/recall", m.MemoryRecallParams, m.MemoryRecallResult, "memory", section="7.17"
    ),
)

METHODS: dict[str, MethodSpec] = {spec.name: spec for spec in _SPECS}

NOTIFICATIONS: dict[str, NotificationSpec] = {
    spec.name: spec
    for spec in (
        NotificationSpec("notifications/progress", m.ProgressParams),
        NotificationSpec("notifications/cancel", m.CancelParams),
        NotificationSpec("notifications/log", m.LogParams),
    )
}

_BY_PYTHON_NAME = {spec.python_name: spec for spec in _SPECS}


def by_python_name(name: str) -> MethodSpec | None:
    """The method whose Python spelling is ``name`` (``index_add``), if any."""
    return _BY_PYTHON_NAME.get(name)
