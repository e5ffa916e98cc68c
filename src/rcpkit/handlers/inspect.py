"""Read-only extension methods that describe the index: ``x-rcpkit/stats``, ``x-rcpkit/document``.

§6.2: vendor methods are named ``x-<vendor>/<name>`` and gated by the
``x-<vendor>`` capability, here ``x-rcpkit`` (``{"methods": [...]}``). They
answer over the wire what ``rcpkit stats`` and ``rcpkit show`` print from the
file, so a browser (the web console) or any client sees the same figures
without shell access to the index. Both only read, and both stay inside the
caller's tenant (§15.6): a tenant-scoped caller sees its own documents and
chunks, never the number of tenants, the size of the shared database or the
operator's source root.
"""

from __future__ import annotations

from typing import Any

from rcpkit.engine.engine import Engine
from rcpkit.engine.ingest.commit_time import last_commit_time
from rcpkit.engine.ingest.roots import ROOT_SETTING
from rcpkit.protocol.errors import ErrorCode, RCPError
from rcpkit.server.app import App
from rcpkit.server.context import RequestContext

__all__ = ["EXTENSION", "INSPECTION_METHODS", "index_figures", "register_inspection"]

EXTENSION = "x-rcpkit"
STATS = f"{EXTENSION}/stats"
DOCUMENT = f"{EXTENSION}/document"
INSPECTION_METHODS = (STATS, DOCUMENT)

# A document view carries at most this many characters of text (and the chunks within
# them): §15.5, one call never ships an unbounded body. `start` pages through the rest.
MAX_DOCUMENT_CHARS = 200_000
_ALL_TENANTS = ("tenants", "size_bytes", "root")  # what only an unscoped caller learns


def index_figures(store: Any, tenant: str | None = None) -> dict[str, Any]:
    """What ``rcpkit stats`` prints, from the store alone; ``tenant``: that tenant's view."""
    documents, chunks = store.count(tenant)
    figures = {
        **store.describe(),
        "documents": documents,
        # Counted by the store: listing every document here made a server's memory grow
        # with the corpus (issue 48: +17 MiB for a Solr-backed server at 100k documents).
        "ingested": store.ingested(tenant),
        "chunks": chunks,
        # §15.6: the tenant's own version numbers (no caller learns another's writes).
        "version": store.tenancy.latest(tenant),
        "floor": store.tenancy.floor(tenant),
        "embedder": store.setting("embed.identity"),
        "dimension": int(store.setting("embed.dimension") or 0) or None,
        "root": store.setting(ROOT_SETTING),
        # The last commit's time, not a file's mtime (which reads move); a tenant's own.
        "last_write": last_commit_time(store, tenant),
    }
    if tenant is not None:
        for name in _ALL_TENANTS:
            figures.pop(name, None)
    return figures


def register_inspection(app: App, engine: Engine) -> None:
    """Register ``x-rcpkit/stats`` and ``x-rcpkit/document`` on ``app``."""
    capability = {"methods": list(INSPECTION_METHODS), "maxDocumentChars": MAX_DOCUMENT_CHARS}

    @app.method(STATS, capability=capability)
    def stats(params: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        figures = index_figures(engine.store, ctx.tenant)
        wire = {_camel(name): value for name, value in figures.items()}
        # The version as retrieve's `indexVersion` spells it (§7.7.1: an opaque string).
        wire["indexVersion"] = str(figures["version"])
        return wire

    @app.method(DOCUMENT, capability=capability)
    def document(params: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        doc_id = params.get("id")
        if not isinstance(doc_id, str) or not doc_id:
            raise RCPError.invalid_params("id", "a document id (a hit's chunk.docId) is required")
        start = params.get("start", 0)
        if not isinstance(start, int) or isinstance(start, bool) or start < 0:
            raise RCPError.invalid_params("start", "a character offset >= 0")
        row = engine.store.document(doc_id, ctx.tenant)
        if row is None:
            # §15.6: worded the same whether the id is missing or another tenant's.
            raise RCPError(ErrorCode.INVALID_PARAMS, f"no document {doc_id!r}", field="id")
        end = min(len(row.text), start + MAX_DOCUMENT_CHARS)
        chunks = [
            {"index": chunk.index, "start": chunk.start, "end": chunk.end, "page": chunk.page}
            for chunk in engine.store.document_chunks(doc_id, ctx.tenant)
            if chunk.start < end and chunk.end > start
        ]
        return {
            "id": row.doc_id,
            "title": row.title,
            "uri": row.uri,
            "source": row.source,
            "modality": row.modality,
            "meta": row.meta,
            "origin": row.origin,
            "length": len(row.text),
            "start": start,
            "text": row.text[start:end],
            "chunks": chunks,
        }


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word.title() for word in rest)
