"""Files and folders to documents: a sorted, deterministic walk and loader dispatch."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path

from rcpkit.engine.ingest._loaders import LOADERS
from rcpkit.engine.ingest._source import FileSource, Loader, SkipFile, rfc3339_utc
from rcpkit.engine.ingest._types import Skipped, SourceDocument

__all__ = ["DEFAULT_MAX_FILE_BYTES", "iter_documents"]

DEFAULT_MAX_FILE_BYTES = 64 * 1024 * 1024
# Hidden names (leading dot) are skipped too, which covers .git, .venv, .tox, caches.
_JUNK_NAMES = frozenset(
    "node_modules __pycache__ __MACOSX site-packages bower_components venv"
    " Thumbs.db desktop.ini".split()
)


def iter_documents(
    paths: Sequence[Path], *, max_file_bytes: int | None = DEFAULT_MAX_FILE_BYTES
) -> Iterator[SourceDocument | Skipped]:
    """Documents from files and folders, in a deterministic order, with a reason per skip.

    Folders are walked recursively in name order; hidden and junk entries are pruned
    silently, symlinked folders are not followed. A file's id is its POSIX path relative
    to the root it was found under (a root that is a file is its own name). Ids are
    unique over one call: a later file or row repeating an id is skipped.
    """
    seen_files: set[Path] = set()
    seen_ids: set[str] = set()
    for root in paths:
        # Absolute from the start, so every Skipped.path and URI names the same file.
        for found in _find_sources(Path(os.path.abspath(root)), max_file_bytes):
            if isinstance(found, Skipped):
                yield found
                continue
            real_path = found.path.resolve()
            if real_path in seen_files:
                yield Skipped(found.path, "already ingested in this call")
                continue
            seen_files.add(real_path)
            for item in _load(found):
                if isinstance(item, SourceDocument):
                    if item.id in seen_ids:
                        item = Skipped(found.path, f"duplicate document id {item.id!r}")
                    else:
                        seen_ids.add(item.id)
                yield item


def _find_sources(root: Path, max_file_bytes: int | None) -> Iterator[FileSource | Skipped]:
    if root.is_dir():
        for path in _walk(root):
            yield path if isinstance(path, Skipped) else _source(path, root, max_file_bytes)
    elif root.is_file():
        yield _source(root, root.parent, max_file_bytes)
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


def _source(path: Path, root: Path, max_file_bytes: int | None) -> FileSource | Skipped:
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
    )


def _load(source: FileSource) -> Iterator[SourceDocument | Skipped]:
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
