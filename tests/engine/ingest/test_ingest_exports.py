"""The ingest package's public surface is exactly the intended names."""

from __future__ import annotations

import rcpkit.engine.ingest as ingest


def test_the_ingest_package_exports_exactly_the_intended_names() -> None:
    assert set(ingest.__all__) == {
        "SourceDocument",
        "PageSpan",
        "Skipped",
        "ChunkSpan",
        "iter_documents",
        "chunk_document",
        "contextual_prefix",
        "whitespace_token_counter",
        "SUPPORTED_EXTENSIONS",
        "IngestOptions",
        "with_language",  # the handlers tag an index/add code document with its lang
    }


def test_every_exported_ingest_name_exists() -> None:
    for name in ingest.__all__:
        assert hasattr(ingest, name), name


def test_the_ingest_package_has_a_docstring() -> None:
    assert ingest.__doc__
    assert "iter_documents" in ingest.__doc__
