"""Files and folders to documents: a sorted, deterministic walk and loader dispatch."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path

from rcpkit.engine.ingest._loaders import LOADERS
from rcpkit.engine.ingest._source import FileSource, Loader, SkipFile, rfc3339_utc
from rcpkit.engine.ingest._types import Skipped, SourceDocument
from rcpkit.engine.ingest_options import IngestOptions

__all__ = ["DEFAULT_MAX_FILE_BYTES", "find_sources", "iter_documents", "load_source"]

DEFAULT_MAX_FILE_BYTES = 64 * 1024 * 1024
# Hidden names (leading dot) are skipped too, which covers .git, .venv, .tox, caches.
_JUNK_NAMES = frozenset(
    "node_modules __pycache__ __MACOSX site-packages bower_components venv"
    " Thumbs.db desktop.ini".split()
)


def iter_documents(
    paths: Sequence[Path],
    *,
    max_file_bytes: int | None = DEFAULT_MAX_FILE_BYTES,
    root: Path | None = None,
    options: IngestOptions | None = None,
) -> Iterator[SourceDocument | Skipped]:
    """Documents from files and folders, in a deterministic order, with a reason per skip.

    Folders are walked recursively in name order; hidden and junk entries are pruned
    silently, symlinked folders are not followed. A file's id is its POSIX path relative
    to ``root`` when given (the index's recorded source root), else to the argument it
    was found under (a file argument is its own name). Ids are unique over one call: a
    later file or row repeating an id is skipped.
    """
    seen_ids: set[str] = set()
    for found in find_sources(paths, max_file_bytes=max_file_bytes, root=root, options=options):
        if isinstance(found, Skipped):
            yield found
            continue
        for item in load_source(found):
            if isinstance(item, SourceDocument):
                if item.id in seen_ids:
                    item = Skipped(found.path, f"duplicate document id {item.id!r}")
                else:
                    seen_ids.add(item.id)
            yield item


def find_sources(
    paths: Sequence[Path],
    *,
    max_file_bytes: int | None = DEFAULT_MAX_FILE_BYTES,
    root: Path | None = None,
    options: IngestOptions | None = None,
) -> Iterator[FileSource | Skipped]:
    """Every file under ``paths`` once, before any byte of it is read (see iter_documents)."""
    seen_files: set[Path] = set()
    settings = options or IngestOptions()
    for argument in paths:
        # Absolute from the start, so every Skipped.path and URI names the same file.
        start = Path(os.path.abspath(argument))
        base = root if root is not None else (start if start.is_dir() else start.parent)
        for found in _find_sources(start, base, max_file_bytes, settings):
            if isinstance(found, Skipped):
                yield found
                continue
            real_path = found.path.resolve()
            if real_path in seen_files:
                yield Skipped(found.path, "already ingested in this call")
                continue
            seen_files.add(real_path)
            yield found


def _find_sources(
    root: Path, base: Path, max_file_bytes: int | None, options: IngestOptions
) -> Iterator[FileSource | Skipped]:
    if root.is_dir():
        for path in _walk(root):
            if isinstance(path, Skipped):
                yield path
            else:
                yield _source(path, base, max_file_bytes, options)
    elif root.is_file():
        yield _source(root, base, max_file_bytes, options)
    elif root.exists():
        yield Skipped(root, "not a regular file or folder")
    else:
        yield Skipped(root, "not found")


def _walk(directory: Path) -> Iterator[Path | Skipped]:
    try:
        with os.scandir(directory) as scan:
            entries = sorted(scan, key=lambda entry: entry.name)
    except OSError as error:
        yield Skipped(directory, f"unreadable folder ({error.strerror or error})")
        return
    for entry in entries:
        if entry.name.startswith(".") or entry.name in _JUNK_NAMES:
            continue
        if entry.is_dir(follow_symlinks=False):
            yield from _walk(Path(entry.path))
        elif entry.is_file():
            yield Path(entry.path)


def _source(
    path: Path, root: Path, max_file_bytes: int | None, options: IngestOptions
) -> FileSource | Skipped:
    try:
        status = path.stat()
    except OSError as error:
        return Skipped(path, f"unreadable ({error.strerror or error})")
    return FileSource(
        path=path,
        doc_id=path.relative_to(root).as_posix(),
        ext=path.suffix.lower(),
        size=status.st_size,
        mtime=rfc3339_utc(status.st_mtime),
        max_bytes=max_file_bytes,
        options=options,
    )


def load_source(source: FileSource) -> Iterator[SourceDocument | Skipped]:
    loader: Loader | None = LOADERS.get(source.ext)
    if loader is None:
        reason = f"unsupported extension {source.ext!r}" if source.ext else "no file extension"
        yield Skipped(source.path, reason)
        return
    # The one place a loader's refusal or an I/O failure becomes a value.
    try:
        yield from loader(source)
    except SkipFile as skip:
        yield Skipped(source.path, skip.reason)
    except OSError as error:
        yield Skipped(source.path, f"unreadable ({error.strerror or error})")
