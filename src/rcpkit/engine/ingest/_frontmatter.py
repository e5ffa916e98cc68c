"""YAML (``---``) and TOML (``+++``) front matter at the top of Markdown-like files.

The block is read into a mapping and then *blanked* in the document text (every
character but newlines becomes a space), so chunk offsets stay offsets into the
raw file and the block is neither embedded nor cited.
"""

from __future__ import annotations

import datetime as dt
import importlib
import re
import tomllib
from typing import Any

from rcpkit.engine.ingest._source import SkipFile

__all__ = ["split_front_matter"]

_FENCES = {"---": "yaml", "+++": "toml"}
_BLOCK = re.compile(r"\A(---|\+\+\+)[ \t]*\n(.*?)\n\1[ \t]*(?:\n|\Z)", re.DOTALL)


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """``(fields, text with the block blanked)``; no block gives ``({}, text)``."""
    found = _BLOCK.match(text)
    if found is None:
        return {}, text
    body = found.group(2)
    fields = _parse(body, _FENCES[found.group(1)])
    blanked = re.sub(r"[^\n]", " ", found.group(0))
    return _plain(fields), blanked + text[found.end() :]


def _parse(body: str, syntax: str) -> dict[str, Any]:
    if syntax == "toml":
        try:
            return tomllib.loads(body)
        except tomllib.TOMLDecodeError as error:
            raise SkipFile(f"front matter is not valid TOML ({error})") from None
    try:
        yaml: Any = importlib.import_module("yaml")  # PyYAML ships no type information
    except ImportError:  # pragma: no cover - PyYAML comes with the engine extra
        raise SkipFile("YAML front matter needs `pip install pyyaml`") from None
    try:
        loaded = yaml.safe_load(body)
    except yaml.YAMLError as error:
        where = getattr(error, "problem_mark", None)
        line = f" at line {where.line + 2}" if where is not None else ""
        raise SkipFile(f"front matter is not valid YAML{line}") from None
    if loaded is None:
        return {}
    if not isinstance(loaded, dict):
        raise SkipFile("front matter is not a mapping of key: value")
    return loaded


def _plain(value: Any) -> Any:
    """Dates and times as RFC 3339 strings (UTC when naive); mappings and lists recursed."""
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, dt.datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
        return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    if isinstance(value, dt.date):
        return f"{value.isoformat()}T00:00:00Z"
    if isinstance(value, dt.time):
        return value.isoformat()
    return value
