"""``rcpkit.open``: an index folder or a PostgreSQL database, opened in this process."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from rcpkit.engine.config import load_config
from rcpkit.engine.fields import declare_fields
from rcpkit.engine.models import load_embedder
from rcpkit.engine.open import in_databases, open_engine
from rcpkit.handlers.engine import build_engine_app
from rcpkit.library._errors import LibraryError, translated
from rcpkit.library._index import Index

__all__ = ["open"]


def open(
    where: str | Path,
    *,
    create: bool = False,
    embedder: str | None = None,
    vectors: int | str | None = None,
    fields: Mapping[str, str] | None = None,
    array_fields: Iterable[str] = (),
    cache: str | Path | None = None,
    config: str | Path | None = None,
    **settings: Any,
) -> Index:
    """Open the index at ``where``: a folder (SQLite), a ``postgresql://`` or a ``solr://`` URL.

    ``create``: make the folder's index if there is none (a database is always the
    index). ``embedder``: the model for a new index (default the bundled MiniLM);
    an existing index is bound to its own (§15.7). ``fields``: filter fields to
    declare now, ``{name: type}`` with §8's types (other keys are typed at first
    sight). ``cache``: for a database, the folder for the query mirror's cache
    (default a temporary one). ``config``: an ``rcpkit.toml``; ``settings``: any
    of its ``[engine]`` keys (``sparse``, ``max_k``, …).
    """
    target = str(where)
    temporary: str | None = None
    with translated():
        embedder = _model(embedder, vectors)
        if in_databases(target):
            if cache is None:
                temporary = tempfile.mkdtemp(prefix="rcpkit-cache-")
            folder = Path(cache or temporary or "")
            settings["store"] = target
        else:
            folder = Path(where).expanduser()
            if not create and not (folder / "index.sqlite3").is_file():
                raise LibraryError(
                    f"no index at {folder}: pass create=True to make one, "
                    "or open the folder `rcpkit index` built"
                )
        chosen = load_config(
            Path(config) if config is not None else None,
            index=folder,
            embedder=embedder,
            **settings,
        )
        engine = open_engine(chosen)
    try:
        with translated():
            _check_bound(engine.identity, embedder, target)
            declare_fields(engine.config, engine.store, dict(fields or {}), array_fields)
            server = build_engine_app(engine).server
            capabilities = server.capabilities
    except BaseException:
        engine.close()
        raise
    index = Index(engine, capabilities, target, server.info_result()["capabilities"])
    if temporary is not None:
        index._on_close.append(lambda: shutil.rmtree(temporary, ignore_errors=True))
    return index


def _model(embedder: str | None, vectors: int | str | None) -> str | None:
    """The embedder spec: a model's, or ``vectors:[name:]dimension`` for your own vectors."""
    if vectors is None:
        return embedder
    if embedder is not None:
        raise LibraryError("give embedder= (a model) or vectors= (your own), not both")
    if isinstance(vectors, bool) or not isinstance(vectors, int | str):
        raise LibraryError("vectors= is a dimension (1536) or 'name:dimension'", field="vectors")
    return f"vectors:{vectors}"


def _check_bound(identity: str, spec: str | None, where: str) -> None:
    """§15.7: an index opened with other vectors than its own is refused at once.

    Your own vectors and hashed ones are named by their identity; a model file is
    checked when it has loaded, at first use (the engine's own check).
    """
    if spec is None or not spec.startswith(("vectors:", "hashing")):
        return
    wanted = load_embedder(spec).identity
    if wanted != identity:
        raise LibraryError(
            f"the index at {where} holds {identity} vectors, not {wanted}; "
            "open it without embedder=/vectors=, or make a new index for these"
        )
