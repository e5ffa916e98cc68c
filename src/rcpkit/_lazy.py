"""Lazy package exports: a name is imported from its module on first use.

>>> __getattr__ = lazy_exports(__name__, {"report": ("Report", "render_text")})

Every ``rcpkit`` start-up builds the CLI parser, which imports the packages whose
options it declares; their ``__init__`` must not pull in the client, the engine
or a web framework (``tests/cli/test_cli_startup.py``). Such a package lists its
exports here and under ``if TYPE_CHECKING:`` (for mypy and a reader), and this
module's ``__getattr__`` (PEP 562) imports each one when it is first read.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(package: str, homes: Mapping[str, Iterable[str]]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: ``{module: names}`` under it."""
    home_of = {name: module for module, names in homes.items() for name in names}

    def __getattr__(name: str) -> Any:
        module = home_of.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{module}"), name)

    return __getattr__
