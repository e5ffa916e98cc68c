"""The engine's own retrieve request: what the pipeline runs, never the wire struct.

The handlers translate a §7.7 ``RetrieveParams`` into a :class:`Query` once
(``rcpkit.handlers.query``): the filter arrives already parsed and checked by
the server runtime (§8, ``ctx.filter``), the query is its text, and an
omitted option is ``None`` here as on the wire, so the pipeline can tell the
default pipeline from one spelled out (only the former takes the feedback
pass, rcpkit.engine.retrieve.prf). Every other caller (the rewriter's
pseudo-relevance passages, benchmarks) builds one directly:

>>> Query("what limits the lift of a wing", k=5, mode="sparse")

The engine also declares here what it implements, so the handlers advertise
exactly that (§6.1 ``retrieve`` capability): its modes, fusion strategies and
retrieval units, and what an omitted ``mode``/``fusion`` means.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Literal

from rcpkit.protocol.base import Unit
from rcpkit.protocol.filters import Filter
from rcpkit.protocol.fusion import FUSION, RRF_K

__all__ = [
    "CHUNK_UNITS",
    "DEFAULT_ALPHA",
    "DEFAULT_FUSION",
    "DEFAULT_MODE",
    "FUSIONS",
    "GRAPH_UNITS",
    "MODES",
    "Fusion",
    "Mode",
    "Query",
    "Recency",
    "Rerank",
]

Mode = Literal["dense", "sparse", "hybrid"]
MODES: tuple[Mode, ...] = ("dense", "sparse", "hybrid")
FUSIONS: tuple[str, ...] = tuple(FUSION)  # §16.3 strategies, the arithmetic in protocol.fusion
# §7.7.2 units the chunk pipeline answers, and those the knowledge graph answers.
CHUNK_UNITS: tuple[Unit, ...] = ("chunk", "passage", "document", "page")
GRAPH_UNITS: tuple[Unit, ...] = ("node", "triplet", "path", "subgraph", "community")

# What an omitted `mode` means here; cursors bind the effective value.
DEFAULT_MODE: Mode = "hybrid"
# The default pipeline's convex α (the dense arm's weight), chosen on the development
# halves of the collections in BENCHMARKS.md "Retrieval quality" (the hybrid rerank
# fuses with it too): the α whose worse dev ratio to BM25 was highest, chosen jointly
# with the BM25 parameters (issue 16, third round: k1 0.9, b 0.6, title 3). With the
# cosine's floor at -1 the dense arm's normalised scores span a narrow band near 1,
# so a high α balances the arms.
DEFAULT_ALPHA = 0.85


@dataclass(frozen=True, slots=True)
class Fusion:
    """§16.3 fusion of the arms: a strategy of :data:`FUSIONS` and its knobs."""

    method: str = "rrf"
    rrf_k: int = RRF_K
    alpha: float = 0.5  # convex: the dense arm's weight (§16.3's default 0.5)
    weights: Mapping[str, float] | None = None


# An omitted `fusion` is §16.3's convex combination, which the spec prefers when every
# fused list has a declared score floor (both arms here do: cosine >= -1, BM25 >= 0).
# A `fusion` the client sends without `method` is RRF, §16.3's default strategy, and
# without `alpha` α is 0.5 (Fusion's own defaults): an explicit request means what the
# spec says.
DEFAULT_FUSION = Fusion(method="convex", rrf_k=RRF_K, alpha=DEFAULT_ALPHA)


@dataclass(frozen=True, slots=True)
class Rerank:
    """§7.7 ``rerank``: the method (None: the engine's default) and the head size."""

    method: str | None = None
    top_n: int | None = None


@dataclass(frozen=True, slots=True)
class Recency:
    """§7.7 ``recency``: exponential decay on a date field."""

    field: str
    half_life_days: float


@dataclass(frozen=True, slots=True)
class Query:
    """One retrieve, as the pipeline runs it (§7.7); see the module docstring."""

    text: str
    k: int = 10
    mode: Mode | None = None  # None: DEFAULT_MODE
    candidate_k: int | None = None
    fusion: Fusion | None = None  # None: DEFAULT_FUSION and the feedback pass
    rerank: Rerank | None = None
    mmr_lambda: float | None = None
    rewrite: str | None = None
    filter: Filter | None = None  # parsed and checked (§8) before it gets here
    min_score: float | None = None
    recency: Recency | None = None
    unit: Unit = "chunk"
    level: int | None = None
    token_budget: int | None = None
    session_id: str | None = None
    include_text: bool = True
    include_vectors: bool = False
    encoding: str = "json"
    seed: int | None = None
    strict: bool = True
    index_version: str | None = None
    cursor: str | None = field(default=None, repr=False)
    # The query's own vector (an index of your own vectors): the dense arm's, unit length.
    vector: tuple[float, ...] | None = None

    @property
    def effective_mode(self) -> Mode:
        return self.mode or DEFAULT_MODE

    @property
    def effective_fusion(self) -> Fusion:
        return self.fusion or DEFAULT_FUSION

    def digest(self, tenant: str | None) -> str:
        """What a cursor binds (§10): the tenant and every option but the cursor and version.

        Options are bound as the engine runs them, so an omitted one and the value
        it defaults to (``mode`` absent and ``"hybrid"``) are the same query. An
        omitted ``fusion`` is not the same as one spelled out: only the former takes
        the feedback pass, so the two rank differently.
        """
        bound = replace(self, mode=self.effective_mode, fusion=self.effective_fusion)
        raw = {
            f.name: repr(getattr(bound, f.name))
            for f in fields(bound)
            if f.name not in ("cursor", "index_version")
        }
        raw["feedback"] = repr(self.fusion is None)
        payload = json.dumps([tenant, raw], sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(payload.encode()).hexdigest()[:32]
