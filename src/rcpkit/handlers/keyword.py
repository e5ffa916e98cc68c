"""The built-in keyword engine as an RCP server: retrieve (sparse) plus index writes."""

from __future__ import annotations

import time
from importlib import resources

import rcpkit
from rcpkit.engine.keyword import KeywordIndex, StoredDocument
from rcpkit.protocol import messages as m
from rcpkit.protocol.capabilities import IndexCapability
from rcpkit.protocol.content import Citation, Hit, Trust, text_of
from rcpkit.protocol.errors import RCPError
from rcpkit.server.app import App
from rcpkit.server.context import RequestContext

__all__ = ["build_keyword_app", "load_samples"]

MAX_K = 100


def load_samples() -> list[StoredDocument]:
    """The bundled sample corpus: short Markdown notes on retrieval."""
    folder = resources.files("rcpkit") / "samples"
    documents = []
    for entry in sorted(folder.iterdir(), key=lambda item: item.name):
        if not entry.name.endswith(".md"):
            continue
        text = entry.read_text(encoding="utf-8")
        first = text.splitlines()[0] if text else ""
        title = first.lstrip("# ").strip() or entry.name
        documents.append(
            StoredDocument(
                id=entry.name.removesuffix(".md"),
                text=text,
                title=title,
                source=f"samples/{entry.name}",
            )
        )
    return documents


def build_keyword_app(index: KeywordIndex, *, writable: bool = True) -> App:
    """An App serving ``index``: BM25 retrieve with progress, and index add/delete."""
    app = App("rcpkit-keyword", rcpkit.__version__, read_only=not writable)
    app.advertise("streaming")
    app.advertise("citations")
    app.advertise("log")  # §17.1: notifications/log in-band, to clients that opt in

    @app.retrieve(
        max_k=MAX_K,
        modes=["sparse"],
        default_mode="sparse",
        units=["document"],
        score_scale="bm25",
        score_floor=0.0,
    )
    def retrieve(params: m.RetrieveParams, ctx: RequestContext) -> m.RetrieveResult:
        started = time.perf_counter()
        query = text_of(params.query)
        ctx.progress(0.1, "recall", "scoring BM25")
        found = index.search(query, params.k, checkpoint=ctx.check_cancelled)
        ctx.progress(0.9, "pack", f"{len(found)} hits")
        hits = [
            Hit(
                id=scored.document.id,
                score=scored.score,
                text=scored.document.text if params.include_text is not False else None,
                unit="document",
                scores={"sparse": scored.score},
                meta=scored.document.meta or None,
                citation=Citation(
                    source=scored.document.source or scored.document.id,
                    title=scored.document.title,
                    start=0,
                    end=len(scored.document.text),
                ),
                # §15.2: user-added text is never labelled trusted.
                trust=Trust(level="untrusted"),
            )
            for scored in found
            if params.min_score is None or scored.score >= params.min_score
        ]
        usage = m.Usage(
            candidates=len(found),
            latency_ms=round((time.perf_counter() - started) * 1000, 3),
            notes=ctx.notes or None,
        )
        return m.RetrieveResult(hits=hits, usage=usage, index_version=str(index.version))

    @app.index_add(capability=IndexCapability(writable=writable))
    def index_add(params: m.IndexAddParams) -> m.IndexAddResult:
        # §4.8: a body given as text blocks is that text (other block types are -32005).
        texts = [
            "\n\n".join(
                part
                for part in (document.text, *(b.text or "" for b in document.content or []))
                if part.strip()
            )
            for document in params.documents
        ]
        for position, text in enumerate(texts):
            if not text.strip():
                raise RCPError.invalid_params(f"documents[{position}].text", "document has no text")
        documents = [
            StoredDocument(
                id=document.id or f"doc-{index.version}-{position}",
                text=texts[position],
                title=document.title,
                source=document.uri,
                meta=dict(document.meta or {}),
            )
            for position, document in enumerate(params.documents)
        ]
        index.upsert(documents)
        return m.IndexAddResult(ids=[document.id for document in documents])

    @app.index_delete()
    def index_delete(params: m.IndexDeleteParams) -> m.IndexDeleteResult:
        return m.IndexDeleteResult(deleted=index.delete(params.ids))

    return app
