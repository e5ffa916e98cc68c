"""HTML: the main text survives, page furniture does not, with either parser backend."""

from __future__ import annotations

from pathlib import Path

import pytest

from rcpkit.engine.ingest import (
    Skipped,
    SourceDocument,
    iter_documents,
)
from rcpkit.engine.ingest import _html as html_module
from rcpkit.engine.ingest._sections import find_sections

PAGE = """<!doctype html>
<html><head><title>  Refund   policy | Acme </title>
<style>.nav { color: red }</style><script>var tracking = "SCRIPT-TEXT";</script></head>
<body>
<header><a href="/">ACME-LOGO</a></header>
<nav><ul><li><a href="/">Home-Link</a></li><li><a href="/shop">Shop-Link</a></li></ul></nav>
<div role="navigation">Breadcrumb-Trail</div>
<main>
  <article>
    <header><h1>Refunds</h1></header>
    <p>We refund   purchases <b>within</b> 30&nbsp;days &amp; no questions.</p>
    <h2>Limits</h2>
    <ul><li>One refund per order</li><li>Keep the receipt</li></ul>
    <pre>code  keeps
  its spacing</pre>
    <form><input name="q"><button>Search-Button</button></form>
  </article>
</main>
<aside>Related-Posts</aside>
<footer>Copyright-Footer 2024</footer>
</body></html>
"""
BOILERPLATE = [
    "SCRIPT-TEXT",
    "color: red",
    "ACME-LOGO",
    "Home-Link",
    "Shop-Link",
    "Breadcrumb-Trail",
    "Search-Button",
    "Related-Posts",
    "Copyright-Footer",
]


@pytest.fixture(params=["lexbor", "stdlib"])
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "lexbor":
        pytest.importorskip("selectolax")
    else:
        monkeypatch.setattr(html_module, "_lexbor", None)
    assert html_module.html_backend() == request.param
    return request.param


def _load(tmp_path: Path, markup: str, name: str = "page.html") -> SourceDocument | Skipped:
    path = tmp_path / name
    path.write_text(markup, encoding="utf-8")
    (item,) = iter_documents([path])
    return item


def test_boilerplate_text_is_gone_and_main_text_stays(tmp_path: Path, backend: str) -> None:
    document = _load(tmp_path, PAGE)
    assert isinstance(document, SourceDocument)
    for furniture in BOILERPLATE:
        assert furniture not in document.text, (backend, furniture)
    assert "We refund purchases within 30 days & no questions." in document.text
    assert "One refund per order\nKeep the receipt" in document.text


def test_the_title_tag_is_the_title(tmp_path: Path, backend: str) -> None:
    document = _load(tmp_path, PAGE)
    assert isinstance(document, SourceDocument)
    assert document.title == "Refund policy | Acme"


def test_headings_become_markdown_lines_that_chunks_follow(tmp_path: Path, backend: str) -> None:
    document = _load(tmp_path, PAGE)
    assert isinstance(document, SourceDocument)
    assert "# Refunds\n\n" in document.text
    assert "\n\n## Limits\n\n" in document.text
    sections = find_sections(document)
    assert [section.heading_path for section in sections] == [("Refunds",), ("Refunds", "Limits")]


def test_preformatted_text_keeps_its_spacing(tmp_path: Path, backend: str) -> None:
    document = _load(tmp_path, PAGE)
    assert isinstance(document, SourceDocument)
    assert "code  keeps\n  its spacing" in document.text


def test_a_page_without_a_title_is_titled_by_its_first_h1(tmp_path: Path, backend: str) -> None:
    document = _load(tmp_path, "<body><h1>Welcome</h1><p>Hello.</p></body>")
    assert isinstance(document, SourceDocument)
    assert document.title == "Welcome"


def test_a_title_without_a_head_element_stays_out_of_the_text(tmp_path: Path, backend: str) -> None:
    document = _load(tmp_path, "<title>Bare title</title><p>Body text.</p>")
    assert isinstance(document, SourceDocument)
    assert (document.title, document.text) == ("Bare title", "Body text.")


def test_a_page_of_only_boilerplate_is_skipped(tmp_path: Path, backend: str) -> None:
    skip = _load(tmp_path, "<html><body><nav>Menu</nav><footer>(c)</footer></body></html>")
    assert isinstance(skip, Skipped)
    assert "boilerplate" in skip.reason


def test_both_backends_extract_the_same_text_without_a_main_element(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("selectolax")
    markup = PAGE.replace("<main>", "<div>").replace("</main>", "</div>")
    markup = markup.replace("<article>", "<section>").replace("</article>", "</section>")
    markup = markup.replace("<header><h1>Refunds</h1></header>", "<h1>Refunds</h1>")
    lexbor = _load(tmp_path, markup)
    monkeypatch.setattr(html_module, "_lexbor", None)
    stdlib = _load(tmp_path, markup)
    assert isinstance(lexbor, SourceDocument)
    assert isinstance(stdlib, SourceDocument)
    assert lexbor.text == stdlib.text


def test_deeply_nested_markup_does_not_hit_the_recursion_limit(tmp_path: Path) -> None:
    markup = "<div>" * 5000 + "Deep text." + "</div>" * 5000
    document = _load(tmp_path, markup)
    assert isinstance(document, SourceDocument)
    assert document.text == "Deep text."
