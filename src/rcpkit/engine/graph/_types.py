"""What extraction yields, and the interface every extractor sits behind."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Protocol, runtime_checkable

__all__ = ["PHRASE_LABEL", "Extraction", "Extractor", "Mention"]

#: The label of a noun-phrase key that no named-entity recogniser typed.
PHRASE_LABEL: Final = "PHRASE"


@dataclass(frozen=True, slots=True)
class Mention:
    """One occurrence of an entity in a text: its key, how it was written, and where."""

    key: str  # normalised entity key, the node id (see `normalize_key`)
    surface: str  # the text as written
    label: str  # NER type (PERSON, GPE, …) or PHRASE
    sentence: int  # index into `Extraction.sentences`
    start: int  # character offsets into the chunk text
    end: int


@dataclass(frozen=True, slots=True)
class Extraction:
    """The sentences of one text (character spans) and the entity mentions found in it."""

    sentences: tuple[tuple[int, int], ...]
    mentions: tuple[Mention, ...]


@runtime_checkable
class Extractor(Protocol):
    """Text → entity mentions, always called with a batch of texts."""

    @property
    def identity(self) -> str:
        """Names the method and its settings; a graph is bound to the extractor that built it."""
        ...

    def extract(self, texts: Sequence[str]) -> list[Extraction]:
        """One `Extraction` per text, in input order."""
        ...
