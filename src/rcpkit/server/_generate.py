"""Writes ``server/_decorators.py``: one typed ``App`` decorator per registered method.

    python -m rcpkit.server._generate        # rewrite the file from the registry
    python -m rcpkit.server._generate --check  # exit 1 if it is out of date

The method registry (``protocol/methods.py``) is the one source of method names
(STYLE 4); the capability structs (``protocol/capabilities.py``) are the one
source of each method's metadata keywords. The generated decorators spell both
out, so a reader and mypy see ``app.retrieve(max_k=…)`` where it is defined.
``tests/server/test_decorators.py`` checks that the checked-in file is current.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import msgspec

from rcpkit.protocol import base, capabilities
from rcpkit.protocol.methods import METHODS, MethodSpec
from rcpkit.server.lowlevel import CAPABILITY_TYPES

__all__ = ["TARGET", "render"]

TARGET = Path(__file__).with_name("_decorators.py")

# Handlers of these methods may return a plain list of hits (server/plain.py).
_PLAIN_RESULTS = ("retrieve", "graph")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_STRING = re.compile(r"'[^']*'|\"[^\"]*\"")
# Choices (Literal types) are plain ``str`` in a decorator's keywords: callers build
# them from lists of their own, and the runtime checks them against the capability
# struct when the handler is registered (App._capability).
_LITERAL = re.compile(r"Literal\[[^\]]*\]")
_LITERAL_ALIASES = ("Modality", "Unit", "Encoding", "FilterFieldType", "FilterOperator")
_BUILTIN_NAMES = {"None", "bool", "int", "float", "str", "list", "dict", "Sequence"}

_HEADER = '''\
"""One decorator per RCP method, each typed with its params, result and capability.

Generated from the method registry (``protocol/methods.py``) and the capability
structs by ``python -m rcpkit.server._generate``; do not edit by hand.

A decorator's keywords are its method's capability metadata (snake_case; None
means "not advertised"), or ``capability=`` gives the whole object. ``mode``
says how the runtime calls the handler (``server/registration.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from rcpkit.protocol import messages as m
{imports}
from rcpkit.server.registration import Handler, HandlerMode, Registrar

__all__ = ["MethodDecorators"]
'''

_CLASS = '''

class MethodDecorators(Registrar):
    """``App``'s decorators; each hands its keywords to ``App._register``."""
'''


def render() -> str:
    """The text of ``_decorators.py`` for the registry as it is now."""
    specs = [spec for spec in METHODS.values() if spec.capability is not None]
    names: set[str] = set()
    handlers: list[str] = []
    methods: list[str] = []
    for spec in specs:
        keywords = _keywords(spec)
        for annotation in keywords.values():
            names.update(_IDENTIFIER.findall(_STRING.sub("", annotation)))
        names.add(CAPABILITY_TYPES[_key(spec)].__name__)
        handlers.append(_handler_type(spec))
        methods.append(_decorator(spec, keywords))
    text = _HEADER.format(imports=_imports(names - _BUILTIN_NAMES))
    text += "\n" + "".join(handlers) + _CLASS + "".join(methods)
    return _formatted(text)


def _formatted(text: str) -> str:
    """``text`` as ``ruff format`` (the project's formatter, a dev tool) writes it."""
    done = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--stdin-filename", str(TARGET), "-"],
        input=text,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return done.stdout


def _key(spec: MethodSpec) -> str:
    assert spec.capability is not None
    return spec.capability


def _keywords(spec: MethodSpec) -> dict[str, str]:
    """The decorator's metadata keywords: the capability's fields, as declared."""
    struct = CAPABILITY_TYPES[_key(spec)]
    annotations = struct.__annotations__
    keywords = {
        field.name: _optional(annotations[field.name]) for field in msgspec.structs.fields(struct)
    }
    if spec.name == "retrieve":
        # §8: `filter=` advertises the filter fields that the runtime validates.
        keywords["filter"] = _optional(capabilities.FilterCapability.__annotations__["fields"])
    return keywords


def _optional(annotation: object) -> str:
    text = str(annotation).replace("'", '"')  # the annotations as written (PEP 563)
    text = _LITERAL.sub("str", text)
    for name in _LITERAL_ALIASES:
        text = re.sub(rf"\b{name}\b", "str", text)
    text = text.replace("list[", "Sequence[")  # lists are invariant; any sequence will do
    return text if text.endswith("| None") else f"{text} | None"


def _imports(names: set[str]) -> str:
    """Each name from the module that defines it (mypy strict re-exports nothing)."""
    in_base = sorted(name for name in names if name in vars(base))
    in_capabilities = sorted(name for name in names if name not in vars(base))
    return "\n".join(
        (
            _import_line("rcpkit.protocol.base", in_base),
            _import_line("rcpkit.protocol.capabilities", in_capabilities),
        )
    )


def _import_line(module: str, members: list[str]) -> str:
    return f"from {module} import {', '.join(members)}"  # ruff format wraps it


def _handler_name(spec: MethodSpec) -> str:
    return "".join(part.capitalize() for part in spec.python_name.split("_")) + "Handler"


def _handler_type(spec: MethodSpec) -> str:
    name = _handler_name(spec)
    if spec.name == "retrieve":
        # A plain handler takes RetrieveParams fields by name (`query`, `k`, …);
        # server/plain.py checks its signature when it is registered.
        return f'{name} = TypeVar("{name}", bound=Callable[..., Any])\n'
    result = f"m.{spec.result.__name__}"
    if spec.name in _PLAIN_RESULTS:
        result += " | Iterable[Any]"
    bound = f"Handler[m.{spec.params.__name__}, {result}]"
    return f'{name} = TypeVar("{name}", bound={bound})\n'


def _decorator(spec: MethodSpec, keywords: dict[str, str]) -> str:
    struct = CAPABILITY_TYPES[_key(spec)].__name__
    handler = _handler_name(spec)
    parameters = "".join(
        f"        {name}: {annotation} = None,\n" for name, annotation in keywords.items()
    )
    takes = "fields by name or " if spec.name == "retrieve" else ""
    doc = f"§{spec.section} ``{spec.name}``: {takes}``{spec.params.__name__}`` in, "
    doc += f"``{spec.result.__name__}`` out."
    return f'''
    def {spec.python_name}(
        self,
        *,
{parameters}        capability: {struct} | dict[str, Any] | None = None,
        mode: HandlerMode | None = None,
    ) -> Callable[[{handler}], {handler}]:
        """{doc}"""
        return self._register("{spec.name}", locals())
'''


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
        if current != text:
            print(f"{TARGET} is out of date: python -m rcpkit.server._generate", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
