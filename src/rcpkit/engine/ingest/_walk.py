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
    follow_links: bool = False,
) -> Iterator[SourceDocument | Skipped]:
    """Documents from files and folders, in a deterministic order, with a reason per skip.

    Folders are walked recursively in name order; hidden and junk entries are pruned
    silently. A symlink to a file inside the folder being walked is read; one pointing
    outside it (``notes.txt -> /etc/passwd``), a broken one and a symlinked folder are
    skipped with their reason, unless ``follow_links`` (then file links are read
    wherever they point; folder links are still not walked). A file's id is its POSIX path relative
    to ``root`` when given (the index's recorded source root), else to the argument it
    was found under (a file argument is its own name). Ids are unique over one call: a
    later file or row repeating an id is skipped.
    """
    seen_ids: set[str] = set()
    found_all = find_sources(
        paths, max_file_bytes=max_file_bytes, root=root, options=options, follow_links=follow_links
    )
    for found in found_all:
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
    follow_links: bool = False,
) -> Iterator[FileSource | Skipped]:
    """Every file under ``paths`` once, before any byte of it is read (see iter_documents)."""
    seen_files: set[Path] = set()
    settings = options or IngestOptions()
    for argument in paths:
        # Absolute from the start, so every Skipped.path and URI names the same file.
        start = Path(os.path.abspath(argument))
        base = root if root is not None else (start if start.is_dir() else start.parent)
        for found in _find_sources(start, base, max_file_bytes, settings, follow_links):
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
    root: Path, base: Path, max_file_bytes: int | None, options: IngestOptions, follow_links: bool
) -> Iterator[FileSource | Skipped]:
    if root.is_dir():
        inside = None if follow_links else root.resolve()
        for path in _walk(root, inside):
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


def _walk(directory: Path, inside: Path | None) -> Iterator[Path | Skipped]:
    """Files under ``directory``; ``inside``: the resolved folder file links must stay in."""
    try:
        with os.scandir(directory) as scan:
            entries = sorted(scan, key=lambda entry: entry.name)
    except OSError as error:
        yield Skipped(directory, f"unreadable folder ({error.strerror or error})")
        return
    for entry in entries:
        if entry.name.startswith(".") or entry.name in _JUNK_NAMES:
            continue
        if entry.is_symlink():
            yield _linked(Path(entry.path), inside)
        elif entry.is_dir(follow_symlinks=False):
            yield from _walk(Path(entry.path), inside)
        elif entry.is_file(follow_symlinks=False):
            yield Path(entry.path)


def _linked(link: Path, inside: Path | None) -> Path | Skipped:
    """A symlink found by the walk: the file it names, or why it is not read.

    Issue 13: a link is resolved in full before it is judged, so a chain of links
    cannot lead out of the folder; ``inside`` None means ``--follow-links``.
    """
    try:
        target = link.resolve(strict=True)
    except (OSError, RuntimeError):
        return Skipped(link, "broken symlink")
    if target.is_dir():
        return Skipped(link, "symlinked folder, not followed")
    if not target.is_file():
        return Skipped(link, "symlink to something that is not a regular file")
    if inside is not None and not target.is_relative_to(inside):
        return Skipped(
            link, f"symlink to {target}, outside the indexed folder (--follow-links reads it)"
        )
    return link


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
