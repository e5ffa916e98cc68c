"""A small two-cluster corpus with known entities, and helpers to build graphs over it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from rcpkit.engine.graph import GraphConfig, KnowledgeGraph, RegexExtractor
from rcpkit.engine.models import EmbedKind, HashingEmbedder, Vectors

# Chunk keys 1-6: a polar expedition; 11-16: a chemistry laboratory. The clusters share
# no entity. Roald Amundsen → Olav Bjaaland → Morgedal is a chain: chunk 3 names only
# entities two or more hops from Amundsen.
POLAR: list[tuple[int, str, str]] = [
    (1, "polar-1", "Roald Amundsen led the expedition to the South Pole aboard the Fram. "
                   "Olav Bjaaland skied beside Roald Amundsen."),
    (2, "polar-2", "Olav Bjaaland grew up in Morgedal. He made the expedition skis himself."),
    (3, "polar-3", "Morgedal lies in Telemark, where Sondre Norheim shaped modern skiing."),
    (4, "polar-4", "The Fram wintered at the Bay of Whales. "
                   "Helmer Hanssen drove the dogs near the Bay of Whales."),
    (5, "polar-5", "Helmer Hanssen and Roald Amundsen reached the South Pole with the dogs."),
    (6, "polar-6", "Sondre Norheim later left Telemark for North Dakota."),
]  # fmt: skip
LAB: list[tuple[int, str, str]] = [
    (11, "lab-1", "Marie Curie isolated Radium in the Paris laboratory. "
                  "Pierre Curie measured the Radium samples."),
    (12, "lab-2", "Pierre Curie built the Electrometer used in the Paris laboratory."),
    (13, "lab-3", "Marie Curie and Pierre Curie shared the Nobel Prize with Henri Becquerel."),
    (14, "lab-4", "Henri Becquerel discovered Uranium rays before Radium was known."),
    (15, "lab-5", "The Paris laboratory stored Uranium salts beside the Electrometer."),
    (16, "lab-6", "Irene Joliot-Curie, daughter of Marie Curie, ran the Radium Institute."),
]  # fmt: skip
CORPUS = POLAR + LAB

POLAR_ENTITIES = frozenset({
    "roald amundsen", "south pole", "fram", "olav bjaaland", "morgedal", "telemark",
    "sondre norheim", "bay of whales", "helmer hanssen", "north dakota",
})  # fmt: skip
LAB_ENTITIES = frozenset({
    "marie curie", "radium", "paris", "pierre curie", "electrometer", "nobel prize",
    "henri becquerel", "uranium", "irene joliot-curie", "radium institute",
})  # fmt: skip


def make_graph(
    path: Path,
    chunks: Sequence[tuple[int, str, str]] = CORPUS,
    config: GraphConfig | None = None,
) -> KnowledgeGraph:
    """A graph over `chunks` (one batch) built with the regex extractor."""
    graph = KnowledgeGraph(path / "graph.sqlite3", RegexExtractor(), config)
    graph.add_chunks(chunks)
    return graph


class CountingEmbed:
    """A hashing embedder's `embed`, counting the texts it was asked to encode."""

    def __init__(self, dimension: int = 256) -> None:
        self.model = HashingEmbedder(dimension)
        self.texts: list[str] = []

    def __call__(self, texts: Sequence[str], kind: EmbedKind = "document") -> Vectors:
        self.texts.extend(texts)
        return self.model.embed(texts, kind)


def embed_of(dimension: int = 256) -> Callable[[Sequence[str], EmbedKind], Vectors]:
    return HashingEmbedder(dimension).embed
