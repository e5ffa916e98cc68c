"""HTML to main text: Lexbor (selectolax) when installed, else the standard library.

Both backends feed the same `TextRenderer`, so they agree on the text. Lexbor also
narrows to ``<main>`` (or a lone ``<article>``) when the page has one, and is an
order of magnitude faster; the fallback drops the same boilerplate tags.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import TYPE_CHECKING

from rcpkit.engine.ingest._html_text import TextRenderer

try:
    from selectolax import lexbor as _lexbor
except ImportError:  # pragma: no cover - the fallback is tested by patching this to None
    _lexbor = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from selectolax.lexbor import LexborHTMLParser, LexborNode

__all__ = ["extract_html", "html_backend"]

_BOILERPLATE_ROLES = frozenset(["navigation", "banner", "contentinfo", "complementary", "search"])
_SPACES = re.compile(r"\s+")


def html_backend() -> str:
    """``"lexbor"`` when selectolax is importable, else ``"stdlib"``."""
    return "stdlib" if _lexbor is None else "lexbor"


def extract_html(markup: str) -> tuple[str, str | None]:
    """The page's main text and its ``<title>`` (``None`` when it has none)."""
    if _lexbor is None:
        return _extract_with_stdlib(markup)
    return _extract_with_lexbor(markup)


def _clean_title(raw: str | None) -> str | None:
    title = _SPACES.sub(" ", raw or "").strip()
    return title or None


def _is_hidden(attributes: dict[str, str | None]) -> bool:
    return (
        attributes.get("role") in _BOILERPLATE_ROLES
        or "hidden" in attributes
        or attributes.get("aria-hidden") == "true"
    )


def _extract_with_lexbor(markup: str) -> tuple[str, str | None]:
    tree = _lexbor.LexborHTMLParser(markup)
    title_node = tree.css_first("title")
    title = _clean_title(title_node.text() if title_node is not None else None)
    body = tree.body or tree.root
    root = _content_root(tree) or body
    text = _render(root) if root is not None else ""
    if not text and root is not body and body is not None:
        text = _render(body)
    return text, title


def _content_root(tree: LexborHTMLParser) -> LexborNode | None:
    main = tree.css_first("main")
    if main is not None:
        return main
    articles = tree.css("article")
    return articles[0] if len(articles) == 1 else None


def _render(root: LexborNode) -> str:
    renderer = TextRenderer()
    # An explicit stack: real pages nest deeper than Python's recursion limit.
    stack: list[tuple[LexborNode, bool]] = [(root, False)]
    while stack:
        node, closing = stack.pop()
        tag = node.tag
        if tag is None:
            continue
        if closing:
            renderer.end(tag)
        elif tag == "-text":
            renderer.text(node.text_content or "")
        elif not tag.startswith("-"):
            descend = renderer.start(tag, hidden=_is_hidden(node.attributes))
            stack.append((node, True))
            if descend:
                children = list(node.iter(include_text=True))
                stack.extend((child, False) for child in reversed(children))
    return renderer.result()


class _EventParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.renderer = TextRenderer()
        self.title_parts: list[str] = []
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._in_title = self._in_title or tag == "title"
        self.renderer.start(tag, hidden=_is_hidden(dict(attrs)))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.renderer.start(tag, hidden=_is_hidden(dict(attrs)))
        self.renderer.end(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        self.renderer.end(tag)

    def handle_data(self, data: str) -> None:
        # A <title> outside <head> is still the title (Lexbor moves it into <head>).
        if self._in_title:
            self.title_parts.append(data)
        else:
            self.renderer.text(data)


def _extract_with_stdlib(markup: str) -> tuple[str, str | None]:
    parser = _EventParser()
    parser.feed(markup)
    parser.close()
    return parser.renderer.result(), _clean_title("".join(parser.title_parts))
