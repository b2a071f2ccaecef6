"""The document view: a document's text with line numbers, the hit highlighted (issue 25).

The text is the one ``get_document`` answers (``mcp.docread.read_document``: the one spelling of a
path inside the knowledge base, every R7.15 check, the read caps). Lines are counted as the index
counts them (LF, CRLF or a lone CR ends one), so a hit's ``start_line``-``end_line`` marks the
lines its chunk came from (the search's words marked inside them as ``match_spans`` would) and the
link's ``#L<start>`` scrolls there. A PDF page, sheet or slide
(binary formats, whose hits are cited by a section such as ``p.3`` or ``Sheet: Totals``) is shown
section by section with the cited one marked and scrolled to (``#hit``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import attrs

from ..mcp.docread import DocumentRead
from ..search.spans import match_spans, span_terms
from ..text import effective_tags, filename_title
from ..types import Section
from .highlight import highlighted
from .html import UI_PATH, esc, page, url

_LINE_END = re.compile(r"\r\n|\r|\n")


@attrs.frozen
class DocRequest:
    """What the URL asks of the view: the path, the hit's lines or section, and the search to go back to."""

    path: str
    first: int | None = None
    last: int | None = None
    section: str | None = None
    query: str = ""


def split_lines(text: str) -> list[str]:
    """The text's lines without their endings; a final line ending opens no extra line."""
    lines = _LINE_END.split(text)
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return lines


def query_terms(query: str) -> list[str]:
    """The words of the search worth marking in the hit's lines, as ``match_spans`` picks them
    (an excluded ``-word`` is left out; quotes are dropped)."""
    words = [w.strip('"') for w in query.split() if not w.startswith("-")]
    return span_terms([w for w in words if w])


def numbered_lines(text: str, first: int | None, last: int | None, terms: Sequence[str] = ()) -> str:
    """An ordered list, one item per line (``id="L<n>"``), the hit's lines marked and, inside
    them, the search's ``terms``."""
    lines = split_lines(text)
    if first is not None:
        last = max(first, last if last is not None else first)
    items = []
    for number, line in enumerate(lines, start=1):
        hit = first is not None and last is not None and first <= number <= last
        cls = ' class="hit"' if hit else ""
        body = highlighted(line, match_spans(line, terms)) if hit and terms else esc(line)
        items.append(f'<li id="L{number}"{cls}><code>{body or " "}</code></li>')
    return f'<ol class="lines" aria-label="Document text">{"".join(items)}</ol>'


def _section_id(sections: Sequence[Section], wanted: str | None) -> int | None:
    if wanted is None:
        return None
    return next((i for i, s in enumerate(sections) if s.heading == wanted), None)


def sections_view(sections: Sequence[Section], wanted: str | None) -> str:
    """One block per section (page, sheet, slide), the cited one marked with ``id="hit"``."""
    hit = _section_id(sections, wanted)
    out = []
    for i, section in enumerate(sections):
        heading = section.heading or "(no heading)"
        marker = ' id="hit" class="section hit"' if i == hit else f' id="s{i + 1}" class="section"'
        out.append(
            f"<section{marker}><h2>{esc(heading)}</h2>"
            f'<pre class="section-text">{esc(section.text)}</pre></section>'
        )
    return "".join(out) or '<p class="empty">This document has no text.</p>'


def _meta(read: DocumentRead) -> str:
    doc = read.doc
    parts = []
    if doc.date:
        parts.append(f"date {esc(doc.date)}")
    if doc.topic:
        parts.append(f"topic {esc(doc.topic)}")
    tags = effective_tags(doc.tags, doc.system_tags)
    if tags:
        parts.append("tags " + ", ".join(esc(t) for t in tags))
    return f'<p class="meta">{" · ".join(parts)}</p>' if parts else ""


def _where(req: DocRequest, binary: bool) -> str:
    if binary and req.section:
        return f'<p class="where">Cited section: <a href="#hit">{esc(req.section)}</a></p>'
    if req.first is not None:
        last = req.last if req.last is not None and req.last > req.first else None
        span = f"{req.first}–{last}" if last else str(req.first)
        return (
            f'<p class="where">The hit: <a href="#L{req.first}"><code>{esc(req.path)}:{span}</code></a></p>'
        )
    return ""


def document_page(read: DocumentRead, req: DocRequest, kb_name: str) -> str:
    """The whole view of one document."""
    binary = read.parser.kind == "binary"
    title = read.doc.title or filename_title(read.path) or read.path
    links = [f'<a href="{esc(url(f"{UI_PATH}/graph", {"start": read.path}))}">Connections</a>']
    if req.query:
        links.insert(0, f'<a href="{esc(url(UI_PATH, {"q": req.query}))}">Back to results</a>')
    body = (
        f'<article class="document"><h1>{esc(title)}</h1>'
        f'<p class="path"><code>{esc(read.path)}</code> · {" · ".join(links)}</p>'
        + _meta(read)
        + _where(req, binary)
    )
    if read.truncated:
        body += '<p class="note">The document is longer than the read cap; the text below is cut.</p>'
    if binary:
        body += sections_view(read.doc.sections, req.section)
    else:
        body += numbered_lines(read.text, req.first, req.last, query_terms(req.query))
    return page(title, body + "</article>", kb_name=kb_name)
