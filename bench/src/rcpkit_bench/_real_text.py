"""Real text chunks for the scale benchmarks, from what is installed on this machine.

Sources, in this order, each text once:

1. the shared Cranfield abstracts cut into 60-word passages (as
   ``benchmarks/library_peers.py`` cuts them);
2. the prose of the triple-quoted strings (docstrings, mostly) of this Python's
   standard library and of the installed packages;
3. the manual pages under ``/usr/share/man``: English first, then the
   translations in languages that put spaces between words (not Chinese,
   Japanese or Korean, where a "60-word window" would be a whole page);
4. the text files of ``/usr/share/doc`` (READMEs, NEWS, ``*.txt``/``*.md``/
   ``*.rst``, gzip'd or not; not changelogs, licences or copyright files);
5. the ``*.md``/``*.rst``/``*.txt`` files elsewhere under ``/usr``, this Python's
   prefix and the venv, and the descriptions of the installed distributions;
6. the comment prose of the Go, C and Java sources under ``/usr``;
7. the triple-quoted strings of the other Python modules under ``/usr`` (the
   Google Cloud SDK's, Debian's);
8. the comment prose (Javadoc) of the JDKs' ``src.zip``.

Every source is cut into paragraphs of 20 words or more and 60-word windows;
from the third on, markup is stripped (``_markup``) and a window whose words are
mostly not words of prose (options, code, tables) is left out. Nothing is
downloaded. Each source's passages are kept on disk (``CACHE``), keyed by the
list of its files (path, size, modification time) and ``_markup.VERSION``, so
a second run reads them back instead of unpacking 21,000 manual pages again.

Past the first pass, the same texts again, windows shifted (``SHIFTS``): every
source's paragraphs cut from half a window in (30 words: windows across the
first pass's seams), then from a quarter and three quarters in. These passages
are distinct but overlap the first pass's by half or more; ``chunks(n)`` for n up
to ``unshifted()`` is the first pass alone, as it was before shifts existed.

On the development machine (2026-12-07, ``available()`` then): 532,948 distinct
passages in the first pass — Cranfield 3,784, Python strings +107,015 (110,799:
enough for 100k), English manual pages +52,540, translated ones +8,925,
``/usr/share/doc`` +48,010, text files +56,846, Go/C comments +79,790, other
Python +80,149, Javadoc +95,889. With the shifted passes (2026-12-08):
1,086,444 in all, so 1M holds 467,052 shifted windows. Reading every source the
first time took 200 s (load average 10 on 2 cores), each shifted pass about
40 s more (load 2); once kept, ``chunks(100_000)`` takes 4 s and ``available()``
25 s (listing and stat'ing the files that key the cache).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import sysconfig
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from rcpkit.evaluation.collections import SHARED_CRANFIELD
from rcpkit_bench import _markup
from rcpkit_bench.report import BenchUnavailable

__all__ = ["WINDOW", "chunks", "queries"]

WINDOW = _markup.WINDOW  # words a passage
# Where each pass's windows start in a paragraph: the first pass at its first word,
# then half a window in (windows across the first pass's seams), then a quarter and
# three quarters in; a pass is read only when the ones before it are not enough.
SHIFTS = (0, WINDOW // 2, WINDOW // 4, 3 * WINDOW // 4)
CACHE = Path(tempfile.gettempdir()) / "rcpkit-real-text"
USR = Path("/usr")
# Manual pages' languages without spaces between words: no 60-word windows there.
_UNSPACED = ("ja", "ko", "zh")
_NOT_PROSE = ("changelog", "copying", "copyright", "licence", "license", "notice", "authors")


@dataclass(frozen=True)
class Source:
    """One source of passages: its files, in order, and how one file is read."""

    name: str
    files: Callable[[], list[Path]]
    passages: Callable[[Path, int], Iterator[str]]  # a file's windows, from word ``int`` on


def chunks(count: int, cranfield: Path = SHARED_CRANFIELD) -> list[str]:
    """The first ``count`` distinct passages; BenchUnavailable when there are fewer here."""
    found: dict[str, None] = {}
    for text in _all_passages(cranfield):
        found.setdefault(text)
        if len(found) == count:
            return list(found)
    raise BenchUnavailable(f"only {len(found):,} real-text chunks on this machine, not {count:,}")


def available(cranfield: Path = SHARED_CRANFIELD) -> int:
    """How many distinct passages this machine has in all (reads every source)."""
    return len(dict.fromkeys(_all_passages(cranfield)))


def unshifted(cranfield: Path = SHARED_CRANFIELD) -> int:
    """How many distinct passages the first pass gives: ``chunks(n)`` past it are shifted."""
    return len(dict.fromkeys(_one_pass(cranfield, shift=0)))


def queries(count: int, cranfield: Path = SHARED_CRANFIELD) -> list[str]:
    """Cranfield's natural-language queries (the first ``count``), else passages' openings."""
    path = cranfield / "queries.jsonl"
    if path.exists():
        with path.open(encoding="utf-8") as lines:
            asked = [str(json.loads(line)["text"]) for line in lines]
    else:
        asked = [" ".join(text.split()[:8]) for text in chunks(count * 50)[::50]]
    return asked[:count]


def _all_passages(cranfield: Path) -> Iterator[str]:
    """Every source's windows, then every source's again with each shift in turn."""
    for shift in SHIFTS:
        yield from _one_pass(cranfield, shift)


def _one_pass(cranfield: Path, shift: int) -> Iterator[str]:
    corpus = cranfield / "corpus.jsonl"
    if corpus.exists():
        with corpus.open(encoding="utf-8") as lines:
            for line in lines:
                yield from _markup.windows(str(json.loads(line)["text"]), shift)
    for source in sources():
        yield from _cached(source, shift)


def sources() -> list[Source]:
    """Every source after Cranfield, in the order their passages are taken."""
    return [
        Source("python-strings", _python_files, _markup.python_strings),
        Source("man-en", lambda: _manual_pages(english=True), _markup.manual_page),
        Source("man-translated", lambda: _manual_pages(english=False), _markup.manual_page),
        Source("usr-share-doc", _doc_files, _markup.text_file),
        Source("text-files", _text_files, _markup.text_file),
        Source("source-comments", _source_files, _markup.source_comments),
        Source("python-strings-usr", _other_python_files, _markup.python_strings),
        Source("jdk-comments", _jdk_sources, _markup.zipped_comments),
    ]


def _cached(source: Source, shift: int) -> Iterator[str]:
    """The source's passages, from CACHE when its files are the ones it was made from."""
    files = source.files()
    key = hashlib.sha256(_markup.VERSION.encode())
    for path in files:
        try:
            stat = path.stat()
        except OSError:
            continue
        key.update(f"{path}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    name = f"{source.name}-shifted{shift}" if shift else source.name  # unshifted: as before
    kept = CACHE / f"{name}-{key.hexdigest()[:16]}.txt"
    if kept.exists():
        with kept.open(encoding="utf-8") as lines:
            yield from (line.rstrip("\n") for line in lines)
        return
    # Read whole before the first passage is used: a source half read is not kept.
    passages = [text for path in files for text in _read(source, path, shift)]
    CACHE.mkdir(parents=True, exist_ok=True)
    partial = kept.with_suffix(f".{os.getpid()}.partial")
    partial.write_text("".join(f"{text}\n" for text in passages), encoding="utf-8")
    partial.replace(kept)  # whole or absent: another run may be reading the same key
    yield from passages


def _read(source: Source, path: Path, shift: int) -> Iterator[str]:
    try:
        yield from source.passages(path, shift)
    except (OSError, UnicodeDecodeError, EOFError):
        return  # an unreadable or truncated file gives nothing, not a failed run


def _python_files() -> list[Path]:
    paths = sysconfig.get_paths()
    roots = dict.fromkeys((paths["stdlib"], paths["purelib"]))
    return [module for root in roots for module in sorted(Path(root).rglob("*.py"))]


def _manual_pages(english: bool) -> list[Path]:
    root = USR / "share" / "man"
    if not root.is_dir():
        return []
    found: list[Path] = []
    for folder in sorted(root.iterdir()):
        section = folder.name.startswith("man")
        if english == section and not folder.name.startswith(_UNSPACED):
            found.extend(_walk(folder, lambda name: True))
    return found


def _doc_files() -> list[Path]:
    return _walk(USR / "share" / "doc", lambda name: _is_text(name, bare=True))


def _text_files() -> list[Path]:
    """Text files outside /usr/share/doc and /usr/share/man, and distributions' METADATA."""
    roots = (USR, Path(sys.base_prefix), Path(sys.prefix))
    read = (USR / "share" / "doc", USR / "share" / "man")
    found: dict[Path, None] = {}
    for root in roots:
        for path in _walk(root, lambda name: _is_text(name, bare=False) or name == "METADATA"):
            if not path.is_relative_to(read[0]) and not path.is_relative_to(read[1]):
                found.setdefault(path)
    return list(found)


def _source_files() -> list[Path]:
    return _walk(USR, lambda name: name.endswith((".go", ".c", ".h", ".java")))


def _other_python_files() -> list[Path]:
    """Python modules under /usr that are not this Python's (Google Cloud SDK, Debian's)."""
    read = {
        Path(root) for root in (sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["purelib"])
    }
    return [
        path
        for path in _walk(USR, lambda name: name.endswith(".py"))
        if not any(path.is_relative_to(root) for root in read)
    ]


def _jdk_sources() -> list[Path]:
    """The JDKs' ``src.zip`` (their Javadoc), each archive once however many links name it."""
    archives = sorted((USR / "lib" / "jvm").glob("*/**/src.zip"))
    return sorted({path.resolve() for path in archives if path.is_file()})  # not dangling


def _walk(root: Path, wanted: Callable[[str], bool]) -> list[Path]:
    """The regular files under ``root`` whose name is wanted, sorted; links not followed."""
    found: list[Path] = []
    for folder, children, names in os.walk(root):
        children.sort()
        found.extend(Path(folder) / name for name in sorted(names) if wanted(name))
    return [path for path in found if not path.is_symlink()]


def _is_text(file_name: str, bare: bool) -> bool:
    name = file_name.lower().removesuffix(".gz")
    if name.startswith(_NOT_PROSE) or ".debian" in name:
        return False
    suffix = Path(name).suffix
    if suffix in (".md", ".rst", ".txt"):
        return True
    return bare and (suffix == "" or name.startswith(("readme", "news")))
