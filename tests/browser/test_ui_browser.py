"""The search page in a real browser (issue 25): headless Chromium through chromedriver on a real
``groove serve --transport http`` over an index built with the real model.

Searches in English and Japanese, opens a hit, follows a graph node, the note full of markup, the
Content-Security-Policy (present, enforced, and no violation in the console on our own pages), and
keyboard-only use. The run saves the screenshots docs/ui.md shows.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from grooveseek.testing.servers import HttpServer, serve_http
from tests.browser.wd import ELEMENT, ENTER, TAB, Browser
from tests.conftest import IndexedKB

SHOTS = Path(__file__).resolve().parents[2] / "docs" / "ui"


@pytest.fixture(scope="module")
def served(ui_kb: IndexedKB) -> Iterator[HttpServer]:
    with serve_http(ui_kb.config) as server:
        yield server


@pytest.fixture
def page(browser: Browser, served: HttpServer) -> Iterator[Browser]:
    """The browser with its console drained before the test and checked after it: our pages must
    not make the browser report a policy violation or any other error."""
    browser.console()
    yield browser
    problems = [
        e for e in browser.console() if e["level"] == "SEVERE" or "Content Security Policy" in e["message"]
    ]
    assert not problems, problems


def search(browser: Browser, served: HttpServer, query: str) -> None:
    browser.go(f"{served.base}/ui")
    browser.loaded("/ui")
    browser.type_into(browser.find("#q"), query)
    browser.press(ENTER)
    browser.wait_for(
        "return document.querySelector('ol.hits') !== null && document.readyState === 'complete'"
    )


def test_english_search_then_open_a_hit_scrolled_to_its_lines(page: Browser, served: HttpServer) -> None:
    search(page, served, "install a package from a lockfile")
    assert page.js("return document.title").startswith("install a package from a lockfile")
    assert "q=install+a+package+from+a+lockfile" in page.url  # the search is its URL
    first = page.find("ol.hits a.open")
    href = page.js("return arguments[0].getAttribute('href')", _el(first))
    page.click(first)
    page.loaded("/ui/doc")
    start = int(parse_qs(urlsplit(href).query)["from"][0])
    hit = page.wait_for("return document.querySelector('li.hit') && document.querySelector('li.hit').id")
    assert hit == f"L{start}"
    top = page.js("return document.getElementById(arguments[0]).getBoundingClientRect().top", hit)
    assert 0 <= top < page.js("return window.innerHeight")  # scrolled to the hit
    page.screenshot(SHOTS / "document.png")


def test_japanese_search_marks_the_matched_words(page: Browser, served: HttpServer) -> None:
    search(page, served, "配列のコピー")
    marks = page.js("return Array.from(document.querySelectorAll('ol.hits mark')).map(m => m.textContent)")
    assert marks and all(set(m) <= set("配列のコピー") for m in marks), marks
    assert "配列" in "".join(marks)
    page.screenshot(SHOTS / "search-ja.png")


def test_the_graph_fits_the_screen_and_a_node_opens_its_document(page: Browser, served: HttpServer) -> None:
    page.go(f"{served.base}/ui/graph?start=commands/npm-ci.md")
    page.loaded("/ui/graph")
    box = page.js(
        "const r = document.querySelector('svg.graph').getBoundingClientRect(); return [r.top, r.bottom];"
    )
    assert 0 < box[0] < box[1] <= page.js("return window.innerHeight")  # whole without scrolling
    text = page.js("return document.querySelector('svg.graph .doc-title').getBoundingClientRect().height")
    assert text >= 10  # and legible: the fitted picture keeps document titles at 10 px or more
    page.screenshot(SHOTS / "graph.png")
    before = page.js("return document.querySelector('svg.graph').getAttribute('viewBox')")
    page.click(page.find("button[data-action='zoom-in']"))
    assert page.js("return document.querySelector('svg.graph').getAttribute('viewBox')") != before
    page.click(page.find("button[data-action='zoom-reset']"))
    assert page.js("return document.querySelector('svg.graph').getAttribute('viewBox')") == before
    target = page.find_all("svg.graph a.doclink")[1]
    path = parse_qs(urlsplit(page.js("return arguments[0].getAttribute('href')", _el(target))).query)["path"][
        0
    ]
    page.click(target)
    page.loaded("/ui/doc")
    assert page.js("return document.querySelector('p.path code').textContent") == path


def test_markup_in_a_note_is_text(page: Browser, served: HttpServer) -> None:
    page.go(f"{served.base}/ui/doc?path=notes/xss.md")
    page.loaded("/ui/doc")
    assert page.js("return [window.pwned, window.pwnedTitle, document.title === 'pwned']") == [
        None,
        None,
        False,
    ]
    body = page.js("return document.body.innerText")
    assert "<script>window.pwned = 1</script>" in body and '<img src=x onerror="window.pwned = 2">' in body
    search(page, served, "xsscanary")
    assert page.js("return [window.pwned, document.images.length]") == [None, 0]


def test_the_policy_is_sent_and_enforced(browser: Browser, served: HttpServer) -> None:
    policy = httpx.get(f"{served.base}/ui").headers["content-security-policy"]
    assert "script-src 'self'" in policy and "default-src 'none'" in policy
    browser.go(f"{served.base}/ui")
    browser.loaded("/ui")
    browser.console()
    # An inline script slipped into the page is refused by the browser, and the refusal is reported.
    browser.js(
        "const s = document.createElement('script'); s.textContent = 'window.inlineRan = 1';"
        "document.body.appendChild(s);"
    )
    assert browser.js("return window.inlineRan") is None
    assert any("Content Security Policy" in e["message"] for e in browser.console())


def test_keyboard_only(page: Browser, served: HttpServer) -> None:
    page.go(f"{served.base}/ui")
    page.loaded("/ui")
    assert page.js("return document.activeElement.id") == "q"  # the box has the focus on arrival
    page.press(*"npm install", ENTER)
    page.wait_for("return document.querySelector('ol.hits') !== null && document.readyState === 'complete'")
    page.press(TAB, TAB, TAB)  # search button, filters, first hit
    assert page.js("return document.activeElement.className") == "open"
    first = page.js("return document.activeElement.getAttribute('href')")
    page.press("j")
    second = page.js("return document.activeElement.getAttribute('href')")
    page.press("k")
    assert second != first and page.js("return document.activeElement.getAttribute('href')") == first
    page.press(ENTER)
    page.loaded("/ui/doc")
    page.go(f"{served.base}/ui/graph?start=commands/npm-ci.md")
    page.loaded("/ui/graph")
    for _ in range(30):  # Tab along to the picture
        if page.js("return document.activeElement.id") == "graph":
            break
        page.press(TAB)
    assert page.js("return document.activeElement.id") == "graph"
    before = page.js("return document.querySelector('svg.graph').getAttribute('viewBox')")
    page.press("+", "\ue014")  # zoom in, then pan right (ArrowRight)
    assert page.js("return document.querySelector('svg.graph').getAttribute('viewBox')") != before
    page.press("0")
    assert page.js("return document.querySelector('svg.graph').getAttribute('viewBox')") == before
    for _ in range(10):  # on to the first document box
        page.press(TAB)
        if page.js("return document.activeElement.getAttribute('class')") == "doclink":
            break
    page.press(ENTER)
    page.loaded("/ui/doc")
    assert page.js("return document.querySelector('p.path code').textContent") == "commands/npm-ci.md"


def _el(element: str) -> dict[str, str]:
    return {ELEMENT: element}
