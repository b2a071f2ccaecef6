"""The search page on a real ``groove serve --transport http`` (issue 25): the same ranking as MCP,
the same gate, a strict CSP, GET only, nothing outside the knowledge base, markup from notes shown
as text, and ``groove ui`` reusing a running server. The browser tests are in tests/browser/."""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx
import pytest
from mcp import Client

from grooveseek.testing.servers import DEADLINE, HttpServer, line_queue, serve_http, stop
from grooveseek.web.params import MAX_PAGE, PAGE_SIZE, RESULT_WINDOW
from grooveseek.web.routes import CONTENT_SECURITY_POLICY
from tests.conftest import IndexedKB

HOST_REFUSED = "Forbidden: Host header is not allowed"
PAGES = [
    "/ui",
    "/ui?q=npm+install",
    "/ui/doc?path=guides/quickstart.md",
    "/ui/graph?start=guides/quickstart.md",
    "/ui/status",
    "/ui/static/ui.css",
    "/ui/static/ui.js",
    "/ui/static/graph.css",
]


@pytest.fixture(scope="module")
def served(ui_kb: IndexedKB) -> Iterator[HttpServer]:
    with serve_http(ui_kb.config) as server:
        yield server


def get(server: HttpServer, path: str, **headers: str) -> httpx.Response:
    return httpx.get(server.base + path, headers=headers, timeout=DEADLINE)


def page_hits(text: str) -> list[tuple[str, int | None]]:
    """(path, start line) of every hit on a results page, in order."""
    out = []
    for href in re.findall(r'<a class="open" href="([^"]+)"', text):
        query = parse_qs(urlsplit(html.unescape(href)).query)
        start = query.get("from")
        out.append((query["path"][0], int(start[0]) if start else None))
    return out


def mcp_search(server: HttpServer, args: dict) -> list[tuple[str, int | None]]:
    async def main() -> list[tuple[str, int | None]]:
        async with Client(server.mcp, mode="legacy") as client:
            result = await client.call_tool("search", {**args, "limit": RESULT_WINDOW})
            hits = json.loads(result.content[0].text)["results"]
            return [(h["path"], h.get("start_line")) for h in hits]

    return anyio.run(main)


def all_pages(server: HttpServer, path: str) -> list[tuple[str, int | None]]:
    """Every hit of a search, page after page."""
    hits: list[tuple[str, int | None]] = []
    for number in range(1, MAX_PAGE + 1):
        found = page_hits(get(server, f"{path}&page={number}").text)
        hits += found
        if len(found) < PAGE_SIZE:
            break
    return hits


@pytest.mark.parametrize(
    ("url", "args"),
    [
        ("/ui?q=install+a+package+from+a+lockfile", {"query": "install a package from a lockfile"}),
        ("/ui?q=%E9%85%8D%E5%88%97%E3%81%AE%E3%82%B3%E3%83%94%E3%83%BC", {"query": "配列のコピー"}),
        ("/ui?q=search&category=commands", {"query": "search", "category": "commands"}),
        (
            "/ui?q=notes&tag_any=search&path_glob=notes/**",
            {"query": "notes", "tags_any": ["search"], "path_globs": ["notes/**"]},
        ),
    ],
)
def test_a_page_search_ranks_exactly_as_the_mcp_search(served: HttpServer, url: str, args: dict) -> None:
    page = all_pages(served, url)
    assert page, url
    assert page == mcp_search(served, args)


def test_pages_are_paged_over_one_ranking(served: HttpServer) -> None:
    first = page_hits(get(served, "/ui?q=npm").text)
    second = page_hits(get(served, "/ui?q=npm&page=2").text)
    assert len(first) == 10 and second and not set(first) & set(second)
    assert first + second == mcp_search(served, {"query": "npm"})[: len(first) + len(second)]


def test_japanese_matches_are_marked_on_character_boundaries(served: HttpServer) -> None:
    text = get(served, "/ui?q=" + "東京の天気").text
    marks = re.findall(r"<mark>(.*?)</mark>", text)
    assert marks and all(m in "東京の天気" or "東京" in m or "天気" in m for m in marks), marks
    assert "\ufffd" not in text  # a byte offset used as a character offset would cut a character


@pytest.mark.parametrize("path", PAGES)
def test_every_ui_answer_carries_the_strict_policy(served: HttpServer, path: str) -> None:
    answer = get(served, path)
    assert answer.status_code == 200, path
    assert answer.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert (
        "'unsafe-inline'" not in CONTENT_SECURITY_POLICY and "default-src 'none'" in CONTENT_SECURITY_POLICY
    )
    assert answer.headers["x-content-type-options"] == "nosniff"
    if answer.headers["content-type"].startswith("text/html"):
        body = answer.text
        assert "<script>" not in body and " style=" not in body and "<style" not in body
        assert not re.search(r"\son[a-z]+=", body)  # no inline event handlers
        assert not re.search(r'(src|href)="(https?:)?//', body)  # nothing from outside


@pytest.mark.parametrize("path", ["/ui", "/ui/doc?path=guides/quickstart.md", "/ui/static/ui.js", "/ui/nope"])
def test_the_gate_covers_the_pages(served: HttpServer, path: str) -> None:
    refused = get(served, path, Host="evil.example")
    assert (refused.status_code, refused.text) == (403, HOST_REFUSED)
    origin = get(served, path, Origin="http://evil.example")
    assert origin.status_code == 403


def test_the_pages_are_read_only(served: HttpServer) -> None:
    for path in ("/ui", "/ui/doc?path=guides/quickstart.md", "/ui/graph", "/ui/status"):
        answer = httpx.post(served.base + path, data={"q": "x"}, timeout=DEADLINE)
        assert answer.status_code == 405, path
    assert get(served, "/ui/rebuild").status_code == 404


@pytest.mark.parametrize(
    "path",
    [
        "../groove.toml",
        "/etc/passwd",
        "guides/../../groove.toml",
        "guides//quickstart.md",
        "./guides/quickstart.md",
        "GUIDES/quickstart.md",
        "%2e%2e/groove.toml",
    ],
)
def test_no_file_outside_the_knowledge_base_is_served(
    served: HttpServer, ui_kb: IndexedKB, path: str
) -> None:
    answer = httpx.get(served.base + "/ui/doc", params={"path": path}, timeout=DEADLINE)
    assert answer.status_code in (403, 404)
    assert 'model = "minilm' not in answer.text and "root:" not in answer.text


@pytest.mark.parametrize(
    "name", ["..%2Fhtml.py", "../routes.py", "ui.css.bak", "%2E%2E%2F__init__.py", "graph.svg"]
)
def test_static_files_are_a_fixed_list(served: HttpServer, name: str) -> None:
    answer = get(served, f"/ui/static/{name}")
    assert answer.status_code == 404 and "import" not in answer.text


def test_markup_from_a_note_shows_as_text(served: HttpServer) -> None:
    results = get(served, "/ui?q=xsscanary").text
    assert "notes/xss.md" in results
    doc = get(served, "/ui/doc?path=notes/xss.md").text
    for text in (results, doc):
        assert "<script>window" not in text and "<img src=x" not in text and 'href="javascript:' not in text
    assert "&lt;script&gt;window.pwned = 1&lt;/script&gt;" in doc
    assert "&lt;script&gt;window.pwnedTitle = 1&lt;/script&gt; Tricky note" in doc


def test_the_document_view_marks_and_anchors_the_hit(served: HttpServer, ui_kb: IndexedKB) -> None:
    text = get(served, "/ui?q=debounce").text
    href = html.unescape(re.search(r'<a class="open" href="([^"]+)"', text).group(1))
    query = parse_qs(urlsplit(href).query)
    first, last = int(query["from"][0]), int(query["to"][0])
    assert href.endswith(f"#L{first}")
    doc = get(served, href.split("#")[0]).text
    marked = [int(n) for n in re.findall(r'<li id="L(\d+)" class="hit">', doc)]
    assert marked == list(range(first, last + 1))
    source = (ui_kb.kb / query["path"][0]).read_text(encoding="utf-8").splitlines()
    assert len(re.findall(r'<li id="L\d+"', doc)) == len(source)


def test_the_graph_page_links_each_document(served: HttpServer) -> None:
    text = get(served, "/ui/graph?start=commands/npm-ci.md&depth=1&fan_out=3").text
    svg = re.search(r"<svg .*?</svg>", text, re.DOTALL).group(0)
    links = re.findall(r'<a href="(/ui/doc\?path=[^"]+)" class="doclink">', svg)
    assert links and html.unescape(links[0]) == "/ui/doc?path=commands%2Fnpm-ci.md"
    assert get(served, "/ui/graph?start=missing.md").status_code == 404


def test_status_shows_the_index(served: HttpServer, ui_kb: IndexedKB) -> None:
    text = get(served, "/ui/status").text
    documents = int(re.search(r"<th scope=\"row\">Documents</th><td>(\d+)</td>", text).group(1))
    assert documents == sum(1 for p in ui_kb.kb.rglob("*") if p.suffix in (".md", ".pdf"))
    assert "minilm-l6-int8" in text and "no warnings" in text


def test_groove_ui_reuses_the_running_server(served: HttpServer, ui_kb: IndexedKB) -> None:
    cmd = [sys.executable, "-m", "grooveseek", "--config", str(ui_kb.config), "ui"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=DEADLINE, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{served.base}/ui\n"
    assert "already running for this index" in done.stderr


def test_groove_ui_starts_a_loopback_server(tmp_path, ui_kb: IndexedKB) -> None:
    # A copy of the config pointing at the same KB and index, with no server marked: the
    # running one of this module marks the index, so use a private index path.
    cmd = [
        sys.executable,
        "-m",
        "grooveseek",
        "--config",
        str(ui_kb.config),
        "ui",
        "--port",
        "0",
        "--index-path",
        str(tmp_path / "other.db"),
        "--no-watch",
    ]
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        lines = line_queue(proc.stdout)
        url = lines.get(timeout=DEADLINE)
        assert isinstance(url, str) and re.fullmatch(r"http://127\.0\.0\.1:\d+/ui\n", url), url
        answer = httpx.get(url.strip(), timeout=DEADLINE)
        assert answer.status_code == 200 and "GrooveSeek" in answer.text
        assert (tmp_path / "other.db.ui.json").exists()
    finally:
        stop(proc)
    assert not (tmp_path / "other.db.ui.json").exists()


def test_a_pdf_hit_is_cited_and_shown_by_its_page(served: HttpServer) -> None:
    text = get(served, "/ui?q=pdfcanary+migration").text
    assert "<code>reports/plan.pdf · p.2</code>" in text
    href = html.unescape(re.search(r'<a class="open" href="(/ui/doc\?path=reports[^"]+)"', text).group(1))
    assert href.endswith("#hit") and parse_qs(urlsplit(href).query)["section"] == ["p.2"]
    doc = get(served, href.split("#")[0]).text
    assert re.search(
        r'<section id="hit" class="section hit"><h2>p\.2</h2><pre class="section-text">Migration', doc
    )
    assert '<section id="s1" class="section"><h2>p.1</h2>' in doc
