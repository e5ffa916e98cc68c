from __future__ import annotations

import rcpkit.engine.graph as graph


def test_the_graph_package_exports_exactly_the_intended_names() -> None:
    assert set(graph.__all__) == {
        "COMMUNITY_METHODS",
        "EDGE_WEIGHTINGS",
        "LOCAL_UNITS",
        "NAME_LABEL",
        "NOUN_PHRASES",
        "PHRASE_LABEL",
        "CommunityInfo",
        "CommunityPage",
        "DriftResult",
        "EdgeRef",
        "Embed",
        "EntityInfo",
        "Extraction",
        "Extractor",
        "GlobalResult",
        "GraphConfig",
        "GraphHit",
        "KnowledgeGraph",
        "Lineage",
        "LocalResult",
        "Mention",
        "NeighborsResult",
        "RegexExtractor",
        "ScoredCommunity",
        "ScoredEntity",
        "Seed",
        "SpacyExtractor",
        "Unit",
        "normalize_key",
    }


def test_every_exported_name_exists() -> None:
    for name in graph.__all__:
        assert hasattr(graph, name), name


def test_importing_the_package_does_not_load_spacy_or_community_libraries() -> None:
    import subprocess
    import sys

    code = (
        "import sys, rcpkit.engine.graph;"
        "print(sorted(m for m in ('spacy', 'igraph', 'leidenalg', 'networkx') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "[]", done.stderr
