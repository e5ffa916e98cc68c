"""What a folder run reports: bytes done against the bytes that need embedding (issue 51)."""

from __future__ import annotations

from pathlib import Path

from engine_support import make_engine

from rcpkit.engine.ingest.folders import index_folders


class Recorded:
    """A `RunProgress` that keeps every report."""

    def __init__(self) -> None:
        self.total = 0
        self.unneeded_sizes: list[int] = []
        self.reports: list[tuple[int, int, str | None, int]] = []

    def started(self, files: int, size: int) -> None:
        self.files = files
        self.total = size

    def parsed(self, chunks: int) -> None:
        pass

    def embedded(self, files: int, chunks: int, current: str | None, size: int) -> None:
        self.reports.append((files, chunks, current, size))

    def unneeded(self, size: int) -> None:
        self.unneeded_sizes.append(size)

    def recognized(self, files: int, total: int) -> None:
        pass


def test_bytes_done_reach_the_total_less_the_files_that_needed_no_embedding(
    tmp_path: Path,
) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    for number in range(40):
        (notes / f"n{number:02d}.md").write_text(f"# N {number}\n\n" + "heron " * (number + 1))
    engine = make_engine(tmp_path / "idx")
    try:
        first = Recorded()
        index_folders(engine, [notes], progress=first)
        sizes = sum(path.stat().st_size for path in notes.iterdir())
        assert first.total == sizes and first.unneeded_sizes == []
        done = [size for _, _, _, size in first.reports]
        assert done == sorted(done) and done[-1] == sizes  # never back, never past
        assert first.reports[-1][:2] == (40, 40)

        changed = notes / "n07.md"
        changed.write_text("# N 7\n\nA changed note about pelicans.\n")
        again = Recorded()
        index_folders(engine, [notes], progress=again)
        unchanged = sizes - len("# N 7\n\n" + "heron " * 8)
        assert sum(again.unneeded_sizes) == unchanged  # left the total, not counted as done
        assert again.reports[-1] == (40, 1, None, changed.stat().st_size)
    finally:
        engine.close()
