"""The web console end to end: headless Chromium on `rcpkit serve --http` over a real index."""

from __future__ import annotations

import os
import subprocess
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from console_support import Served, child_environment, free_port, rcpkit_command

from process_support import read_until, stop

pytestmark = pytest.mark.timeout(300)  # the first test also builds the index with MiniLM

WAIT = 45.0  # seconds for a page to show what it should (the first retrieve loads the model)


def by_css(css: str) -> tuple[str, str]:
    return ("css selector", css)


def wait_for(driver: Any, css: str, *, count: int = 1, timeout: float = WAIT) -> list[Any]:
    """The elements matching ``css`` once there are at least ``count`` of them."""

    def found(_: Any) -> list[Any] | bool:
        elements = driver.find_elements(*by_css(css))
        return elements if len(elements) >= count else False

    result: list[Any] = wait_until(driver, found, timeout)
    return result


def wait_until(driver: Any, condition: Callable[[Any], Any], timeout: float = WAIT) -> Any:
    """``condition`` once it holds; an element re-rendered meanwhile is looked up again."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(driver, timeout, ignored_exceptions=[StaleElementReferenceException])
    return wait.until(condition)


def type_into(driver: Any, css: str, text: str) -> None:
    """Type ``text`` into the field ``css`` once it is there (and not being re-rendered)."""
    wait_until(driver, lambda _: driver.find_element(*by_css(css)).send_keys(text) or True)


def csp_violations(driver: Any) -> list[str]:
    return [
        entry["message"]
        for entry in driver.get_log("browser")
        if "Content Security Policy" in entry["message"] or "Refused to" in entry["message"]
    ]


def screenshot(driver: Any, folder: Path, name: str) -> Path:
    """A PNG of the page; kept in $RCPKIT_CONSOLE_SCREENSHOTS when set (to look at)."""
    target = Path(os.environ.get("RCPKIT_CONSOLE_SCREENSHOTS") or folder) / f"{name}.png"
    target.parent.mkdir(parents=True, exist_ok=True)
    assert driver.save_screenshot(str(target))
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert target.stat().st_size > 10_000  # a rendered page, not a blank one
    return target


@pytest.fixture(scope="module")
def server(serve: Callable[..., Served]) -> Served:
    """No token configured (read-only), /metrics public beside the endpoint."""
    return serve("--metrics", "public")


def test_a_typed_query_shows_the_expected_hit_its_cited_span_and_page_two(
    browser: Any, server: Served, tmp_path: Path
) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    assert server.console == f"{server.origin}/ui"  # `serve --http` says where it is
    browser.get(server.console)
    wait_for(browser, "details.option-panel summary")[0].click()
    k = browser.find_element(*by_css("#k"))
    k.clear()
    k.send_keys("4")
    keys = ActionChains(browser)
    keys.send_keys(Keys.ESCAPE, "/").perform()  # keyboard-first: "/" is the query box
    assert browser.switch_to.active_element.get_attribute("id") == "q"
    keys.send_keys("reciprocal rank fusion", Keys.ENTER).perform()
    cards = wait_for(browser, "article.hit", count=4)
    assert len(cards) == 4
    first = cards[0]
    assert first.find_element(*by_css(".hit-title")).text == "Hybrid retrieval and rank fusion"
    cited = first.find_element(*by_css(".passage mark.cited"))
    assert "Reciprocal Rank Fusion (RRF), introduced by Cormack" in cited.text
    marked = {mark.text.lower() for mark in cited.find_elements(*by_css("mark.term"))}
    assert {"reciprocal", "rank", "fusion"} <= marked
    assert first.find_element(*by_css(".scores")).text.count("\n") >= 3  # score + stages
    # Issue 52: the operator's own files are not flagged untrusted, and the signals say
    # what they mean (a tooltip on each, a legend above the hits).
    assert first.find_element(*by_css(".trust")).text == "community"
    assert not browser.find_elements(*by_css(".flag.level-untrusted, .flag.warn"))
    level = first.find_element(*by_css(".flag.level-community"))
    assert "rcpkit index" in level.get_attribute("title")
    assert "unrelated text" in first.find_element(*by_css(".confidence")).get_attribute("title")
    legend = browser.find_element(*by_css("#legend"))
    legend.find_element(*by_css("summary")).click()
    assert "confidence" in legend.text and "community" in legend.text
    expansion = browser.find_element(*by_css("#expansion"))  # feedback's terms, shown apart
    assert expansion.find_elements(*by_css("code"))
    assert not browser.find_elements(*by_css("#no-match"))
    assert "q=reciprocal+rank+fusion" in browser.current_url and "k=4" in browser.current_url
    version = browser.find_element(*by_css("#index-version")).text
    assert version.isdigit()

    screenshot(browser, tmp_path, "search")
    page_one = [card.get_attribute("data-id") for card in cards]
    ActionChains(browser).send_keys(Keys.ESCAPE, "j", "j").perform()  # j: the next hit
    assert browser.switch_to.active_element.get_attribute("data-id") == page_one[1]
    ActionChains(browser).send_keys("n").perform()  # n: the next page, through the cursor
    cards = wait_for(browser, "article.hit", count=5)
    page_two = [card.get_attribute("data-id") for card in cards[4:]]
    assert page_two and not set(page_two) & set(page_one)
    assert cards[4].find_element(*by_css(".rank")).text == "5"
    assert browser.find_element(*by_css("#index-version")).text == version  # the cursor pins it
    assert "pages=2" in browser.current_url  # the page shown is part of the URL

    browser.refresh()  # the URL alone reproduces the search, the next page included
    cards = wait_for(browser, "article.hit", count=len(page_one) + len(page_two))
    assert [card.get_attribute("data-id") for card in cards] == page_one + page_two
    assert cards[0].find_element(*by_css(".hit-title")).text == "Hybrid retrieval and rank fusion"
    assert browser.find_element(*by_css("#q")).get_attribute("value") == "reciprocal rank fusion"
    assert csp_violations(browser) == []


def test_a_filter_built_from_the_advertised_fields_narrows_the_hits(
    browser: Any, server: Served
) -> None:
    from selenium.webdriver.support.ui import Select

    browser.get(f"{server.origin}/ui?q=fusion&k=20")
    wait_for(browser, "article.hit")
    wait_until(browser, lambda _: not browser.find_element(*by_css("#status")).text)
    everything = browser.find_elements(*by_css("article.hit .source-name"))
    assert {name.text.split("/")[0] for name in everything} == {"guides", "notes"}

    browser.find_element(*by_css("details.option-panel summary")).click()
    browser.find_element(*by_css("#add-filter")).click()
    row = browser.find_element(*by_css(".filter-row"))
    Select(row.find_element(*by_css(".filter-field"))).select_by_value("folders")
    Select(row.find_element(*by_css(".filter-op"))).select_by_value("contains")
    row.find_element(*by_css(".filter-value")).send_keys("notes")
    browser.find_element(*by_css("#search-form button[type=submit]")).click()
    wait_until(browser, lambda _: "f=folders" in browser.current_url)
    wait_until(
        browser,
        lambda _: (
            (names := browser.find_elements(*by_css("article.hit .source-name")))
            and all(name.text.startswith("notes/") for name in names)
        ),
    )
    narrowed = browser.find_elements(*by_css("article.hit .source-name"))
    assert 0 < len(narrowed) < len(everything)
    assert len(narrowed) <= 4  # the notes folder holds four documents
    assert browser.execute_script(UNLABELLED) == []  # every control says what it is


def test_query_words_are_marked_whole_and_stopwords_not_at_all(
    browser: Any, server: Served
) -> None:
    browser.get(f"{server.origin}/ui?q=the+rank+of+fused+lists&k=5")
    wait_for(browser, "article.hit mark.term")
    marked = {mark.text.lower() for mark in browser.find_elements(*by_css("mark.term"))}
    assert marked and marked <= {"rank", "fused", "lists"}  # never "the" or "of"
    # Issue 52: not "how" inside "however" — nor "rank" inside "ranked" or "ranks".
    assert browser.execute_script(INSIDE_A_WORD) == []


# Marks a letter or digit follows or precedes: a term marked inside a longer word.
INSIDE_A_WORD = """
const inside = (text, at) => /[\\p{L}\\p{N}]/u.test(text.charAt(at));
return [...document.querySelectorAll("mark.term")].filter((mark) => {
  const before = mark.previousSibling?.textContent ?? "";
  const after = mark.nextSibling?.textContent ?? "";
  return inside(before, before.length - 1) || inside(after, 0);
}).map((mark) => mark.parentElement.textContent);
"""


def test_a_query_no_chunk_matches_says_so_and_scores_no_perfect_hit(
    browser: Any, server: Served
) -> None:
    browser.get(f"{server.origin}/ui?q=zebra&k=3")
    notice = wait_for(browser, "#no-match")[0]
    assert "No chunk contains the query's words" in notice.text
    cards = browser.find_elements(*by_css("article.hit .scores"))
    assert cards
    for card in cards:
        stages = {
            row.find_element(*by_css("dt")).text: float(row.find_element(*by_css("dd")).text)
            for row in card.find_elements(*by_css("div"))
        }
        # Only as high as the chunk's cosine on its own [-1, 1] scale: not a perfect hit.
        assert "sparse" not in stages and stages["score"] <= (stages["dense"] + 1) / 2


def test_one_hit_per_document_is_a_toggle_in_search(browser: Any, server: Served) -> None:
    browser.get(f"{server.origin}/ui?q=fusion&k=8")
    chunks = wait_for(browser, "article.hit .source-name")
    names = [name.text for name in chunks]
    assert len(names) > len(set(names))  # by chunk: a document shows more than once
    browser.find_element(*by_css("#per-document")).click()
    wait_until(browser, lambda _: "unit=document" in browser.current_url)
    wait_until(browser, lambda _: browser.find_element(*by_css("#per-document")).is_selected())
    merged = [name.text for name in wait_for(browser, "article.hit .source-name")]
    assert len(merged) == len(set(merged))


# Controls a screen reader could not name: no <label>, no aria-label, no text.
UNLABELLED = """
return [...document.querySelectorAll("input, select, button, meter")]
  .filter((e) => !(e.labels?.length || e.getAttribute("aria-label") || e.textContent.trim()))
  .map((e) => e.outerHTML);
"""


def test_index_document_and_health_views_show_what_the_server_reports(
    browser: Any, server: Served, tmp_path: Path
) -> None:
    browser.get(f"{server.origin}/ui?view=index")
    documents = wait_for(browser, "[data-fact=documents]")[0]
    wait_until(browser, lambda _: documents.text.startswith("12"))  # 8 guides + 4 notes
    facts = browser.find_element(*by_css("#index-stats")).text
    assert "last write" in facts and "MB on disk" in facts
    assert facts.count("all-MiniLM-L6-v2") == 1  # the model once

    browser.get(f"{server.origin}/ui?q=convex+combination+weight&k=3")
    link = wait_for(browser, ".hit-actions a")[0]
    cited_text = browser.find_element(*by_css("article.hit mark.cited")).text
    link.click()
    cited = wait_for(browser, ".document-text mark.cited")[0]
    assert cited.text.strip()[:40] in cited_text  # the hit's span, inside its document
    assert browser.find_elements(*by_css(".document-text .boundary"))
    assert browser.find_elements(*by_css("table.chunks tbody tr"))
    screenshot(browser, tmp_path, "document")

    browser.get(f"{server.origin}/ui?view=health")
    assert wait_for(browser, "#conformance")[0].text == "L2"
    table = browser.find_element(*by_css("#capabilities"))
    assert "{" not in table.text and '"' not in table.text  # read as a table, not JSON
    modes = table.find_element("xpath", ".//tr[th='retrieve']//div[dt='modes']/dd")
    assert modes.text == "dense, sparse, hybrid"
    wait_for(browser, "#charts svg rect.bar")  # retrieve was measured by the calls above
    captions = browser.find_element(*by_css("#charts")).text
    assert "retrieve:" in captions and "p95" in captions
    screenshot(browser, tmp_path, "health")
    assert csp_violations(browser) == []


def test_with_tokens_the_console_asks_for_one_and_says_clearly_when_it_is_wrong(
    browser: Any, serve: Callable[..., Served]
) -> None:
    guarded = serve(RCPKIT_HTTP_TOKENS="console-secret")
    browser.get(f"{guarded.origin}/ui")
    wait_for(browser, "#token")
    assert "needs a token" in browser.find_element(*by_css("#token-message")).text
    type_into(browser, "#token", "not-the-token\n")
    wait_until(
        browser,
        lambda _: "refused the token" in browser.find_element(*by_css("#token-message")).text,
    )
    assert "401" in browser.find_element(*by_css("#token-message")).text
    assert browser.execute_script("return sessionStorage.getItem('rcpkit-console-token')") is None

    type_into(browser, "#token", "console-secret\n")
    type_into(browser, "#q", "rank fusion\n")
    wait_for(browser, "article.hit")
    stored = browser.execute_script(
        "return [sessionStorage.getItem('rcpkit-console-token'), localStorage.length,"
        " document.cookie]"
    )
    assert stored == ["console-secret", 0, ""]  # this tab's session storage only


def test_compare_marks_the_overlap_and_reads_on_a_narrow_window(
    browser_factory: Callable[..., Any], server: Served, tmp_path: Path
) -> None:
    narrow = browser_factory(width=420, height=1400)
    narrow.get(
        f"{server.origin}/ui?view=compare&q=rank+fusion&a.mode=sparse&b.mode=dense&a.k=5&b.k=5"
    )
    summary = wait_for(narrow, "#overlap")[0].text
    columns = narrow.find_elements(*by_css(".column"))
    assert len(columns) == 2
    shared = narrow.find_elements(*by_css("article.hit.shared"))
    assert summary.startswith(f"{len(shared) // 2} shared")
    assert "A: sparse" in columns[0].text and "B: dense" in columns[1].text
    # Readable: the columns stack and nothing needs a horizontal scroll.
    assert columns[1].location["y"] > columns[0].location["y"]
    assert narrow.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
    screenshot(narrow, tmp_path, "compare-narrow")


@pytest.fixture
def console_command(serve: Callable[..., Served]) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """`rcpkit console URL` on a free port, for a server that allows its origin (CORS)."""
    port = free_port()
    origin = f"http://127.0.0.1:{port}"
    remote = serve("--cors-origin", origin, "--metrics", "public")
    child = subprocess.Popen(
        rcpkit_command(
            "console", f"{remote.origin}/rcp", "--port", str(port), "--no-open",
            "--metrics", f"{remote.origin}/metrics",
        ),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=child_environment(),
    )  # fmt: skip
    try:
        match, _ = read_until(child, b"", rb"on (http://\S+/ui)", timeout=30)
        yield match.group(1).decode(), child
    finally:
        stop(child)


def test_rcpkit_console_serves_the_same_pages_against_another_server(
    browser: Any, console_command: tuple[str, subprocess.Popen[bytes]]
) -> None:
    url, _ = console_command
    browser.get(f"{url}?q=reciprocal+rank+fusion&k=3")
    cards = wait_for(browser, "article.hit", count=3)
    assert cards[0].find_element(*by_css(".hit-title")).text == "Hybrid retrieval and rank fusion"
    browser.get(f"{url}?view=health")
    wait_for(browser, "#charts svg rect.bar")  # /metrics read across origins too
    assert csp_violations(browser) == []


def test_no_ui_turns_the_console_off(serve: Callable[..., Served]) -> None:
    off = serve("--no-ui")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(f"{off.origin}/ui", timeout=10)
    refused.value.close()
    assert refused.value.code == 404
