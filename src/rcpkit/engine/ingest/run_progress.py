"""What a folder run reports as it goes, and the tally of files and bytes behind it.

The ETA is carried by bytes, not files (issue 51): a file counter lags the chunk
counter (parsing runs ahead of embedding, and files differ a hundredfold in
size), so "files 26/313" said 30 minutes for a run that ended in 2.5. A file's
bytes count as done once every chunk of it is embedded; a file that needs no
embedding (unchanged, or nothing usable in it) is taken off the total instead,
so the rate of work done is set against the work that remains.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from rcpkit.engine.ingest._source import FileSource

__all__ = ["RunProgress", "Tally"]


class RunProgress(Protocol):
    """What a run reports as it goes (the CLI draws it; tests may record it)."""

    def started(self, files: int, size: int) -> None:
        """``files`` files of ``size`` bytes in all are to be read."""
        ...

    def parsed(self, chunks: int) -> None:
        """Another document was chunked: ``chunks`` more to embed."""
        ...

    def embedded(self, files: int, chunks: int, current: str | None, size: int) -> None:
        """``files``, ``chunks`` and ``size`` bytes are done; ``current`` is being embedded."""
        ...

    def unneeded(self, size: int) -> None:
        """A file of ``size`` bytes needed no embedding: it leaves the total."""
        ...

    def recognized(self, files: int, total: int) -> None:
        """``files`` of the ``total`` OCR-bound files came back from the OCR workers."""
        ...


@dataclass(slots=True)
class Tally:
    """Files read and done, for `RunProgress` (which may be None: then it only counts)."""

    progress: RunProgress | None
    files: int = 0  # done: every chunk embedded, or none needed
    size: int = 0  # bytes of the files done that needed embedding
    waiting: list[FileSource] = field(default_factory=list)  # read, chunks not embedded yet
    work: bool = False  # the file being read yielded a document to embed
    chunks: int = 0  # embedded so far

    def document(self, chunks: int) -> None:
        self.work = True
        if self.progress is not None:
            self.progress.parsed(chunks)

    def file(self, source: FileSource) -> None:
        """``source`` was read to its end."""
        if self.work:
            self.waiting.append(source)
        else:
            self.files += 1
            if self.progress is not None:
                self.progress.unneeded(source.size)
                self._report(None)
        self.work = False

    def embedding(self, current: str) -> None:
        self._report(current)

    def embedded(self, chunks: int) -> None:
        """Every file waiting is done: its chunks were in the embedder call that ended."""
        self.files += len(self.waiting)
        self.size += sum(source.size for source in self.waiting)
        self.chunks = chunks
        self.waiting.clear()
        self._report(None)

    def _report(self, current: str | None) -> None:
        if self.progress is not None:
            self.progress.embedded(self.files, self.chunks, current, self.size)
