"""The source root an index records once, so a file's id never depends on the path given.

`rcpkit index corpus`, `rcpkit index corpus/pdf` and `cd corpus; rcpkit index .` all
name ``corpus/pdf/a.pdf`` ``pdf/a.pdf``: ids are POSIX paths relative to the root
recorded by the first run (the folder given, or the common folder of everything given).
A later run may index anything inside the root; a run whose paths contain the root
widens it (every document under the old root is re-identified in that run, since the
run visits them all); a path beside the root is refused rather than given ids that
could collide with the root's.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlsplit
from urllib.request import url2pathname

__all__ = ["ROOT_SETTING", "choose_root", "file_of_uri", "within"]

ROOT_SETTING = "ingest.root"


def choose_root(recorded: str | None, paths: Sequence[Path]) -> Path:
    """The root for a run over ``paths`` (absolute, resolved), given the recorded one."""
    folders = [path if path.is_dir() else path.parent for path in paths]
    if recorded is None:
        return Path(os.path.commonpath(folders))
    old = Path(recorded)
    if all(within(path, old) for path in paths):
        return old
    wider = Path(os.path.commonpath([old, *folders]))
    if any(path.is_dir() and within(old, path) for path in paths):
        return wider  # this run visits every document under the old root
    outside = next(path for path in paths if not within(path, old))
    raise ValueError(
        f"{outside} is outside this index's source root {old} (document ids are paths "
        f"relative to it); index both in one run (rcpkit index {old} {outside}) to widen "
        f"the root to {wider}, --reroot if the corpus moved, or use another --index"
    )


def within(path: Path, folder: Path) -> bool:
    """``path`` is ``folder`` or lies under it."""
    return path == folder or folder in path.parents


def file_of_uri(uri: str | None) -> Path | None:
    """The file a ``file://`` URI names (fragment dropped), else None."""
    if not uri:
        return None
    parts = urlsplit(uri)
    if parts.scheme != "file":
        return None
    return Path(url2pathname(parts.path))
