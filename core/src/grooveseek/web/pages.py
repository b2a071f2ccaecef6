"""The search page and the status panel as HTML (issue 25).

``search_page`` draws the form (the CLI's filters, prefilled from the URL), the hits of one
``search`` answer as title, ``path:start-end`` (with the section a PDF page, sheet or slide is
cited by, as in search results) and the snippet with its matched spans marked, and a pager over
that one ranking. ``status_page`` draws what ``groove status`` prints plus the last run's skips.
Both take plain values; ``routes.py`` gathers them from the service.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from .highlight import highlighted
from .html import UI_PATH, error_block, esc, page, url
from .params import PAGE_SIZE, RESULT_WINDOW, SearchForm

Json = Mapping[str, Any]


def _field(name: str, label: str, value: str, hint: str, kind: str = "text") -> str:
    return (
        f'<label>{esc(label)} <input type="{kind}" name="{name}" value="{esc(value)}" '
        f'placeholder="{esc(hint)}"></label>'
    )


def search_form(form: SearchForm) -> str:
    filters = "".join(
        [
            _field("category", "Category", form.category, "first folder"),
            _field("topic", "Topic", form.topic, "second folder or frontmatter"),
            _field("tag_any", "Any tag", ",".join(form.tag_any), "a,b"),
            _field("tag_all", "All tags", ",".join(form.tag_all), "a,b"),
            _field("path_glob", "Path glob", " ".join(form.path_glob[:1]), "docs/**/*.md, !drafts/**"),
            _field("date_from", "From", form.date_from, "2024-01-01"),
            _field("date_to", "To", form.date_to, "2024-12-31"),
        ]
    )
    extra_globs = "".join(
        f'<input type="hidden" name="path_glob" value="{esc(g)}">' for g in form.path_glob[1:]
    )
    opened = " open" if form.has_filters else ""
    return (
        f'<form class="search" method="get" action="{UI_PATH}" role="search">'
        f'<input type="search" name="q" id="q" value="{esc(form.q)}" aria-label="Search the notes" '
        'placeholder="Search your notes (English, 日本語, …)" autofocus>'
        '<button type="submit">Search</button>'
        f'<details class="filters"{opened}><summary>Filters</summary><div class="grid">{filters}</div>'
        f"{extra_globs}</details></form>"
    )


def hit_link(hit: Json, query: str) -> str:
    """The document view at this hit: its lines (text) or its cited section (PDF page, sheet, slide)."""
    path = str(hit["path"])
    start, end = hit.get("start_line"), hit.get("end_line")
    params: dict[str, Any] = {"path": path, "q": query}
    if isinstance(start, int):
        params.update({"from": start, "to": end if isinstance(end, int) else start})
        return url(f"{UI_PATH}/doc", params, f"L{start}")
    if hit.get("heading"):
        params["section"] = hit["heading"]
        return url(f"{UI_PATH}/doc", params, "hit")
    return url(f"{UI_PATH}/doc", params)


def citation(hit: Json) -> str:
    """``path:start-end`` plus the section a hit is cited by (``p.3``, ``Sheet: Totals``, ``Slide 2``)."""
    path = str(hit["path"])
    start, end = hit.get("start_line"), hit.get("end_line")
    where = path
    if isinstance(start, int):
        where += f":{start}-{end}" if isinstance(end, int) and end != start else f":{start}"
    heading = hit.get("heading")
    return f"{where} · {heading}" if heading else where


def _hit(rank: int, hit: Json, query: str) -> str:
    title = hit.get("title") or str(hit["path"]).rsplit("/", 1)[-1]
    spans = [(s["start"], s["end"]) for s in hit.get("match_spans") or ()]
    graph = url(f"{UI_PATH}/graph", {"start": hit["path"]})
    return (
        f'<li class="result" value="{rank}">'
        f'<h2><a class="open" href="{esc(hit_link(hit, query))}">{esc(title)}</a></h2>'
        f'<p class="cite"><code>{esc(citation(hit))}</code> · '
        f'<a class="related" href="{esc(graph)}">connections</a></p>'
        f'<p class="snippet">{highlighted(str(hit.get("content", "")), spans)}</p></li>'
    )


def _pager(form: SearchForm, total: int) -> str:
    pages = max(1, -(-total // PAGE_SIZE))
    if pages == 1:
        return ""
    links = []
    for number in range(1, pages + 1):
        href = esc(url(UI_PATH, form.params(page=number)))
        current = ' aria-current="page"' if number == form.page else ""
        links.append(f'<a href="{href}"{current}>{number}</a>')
    return f'<nav class="pager" aria-label="Result pages">{"".join(links)}</nav>'


def results_block(form: SearchForm, answer: Json) -> str:
    if "error" in answer:
        return error_block(str(answer["error"]))
    hits: Sequence[Json] = answer.get("results", [])
    if not hits:
        return '<p class="empty">No matches. Try other words, or fewer filters.</p>'
    first = (form.page - 1) * PAGE_SIZE
    shown = hits[first : first + PAGE_SIZE]
    more = " (the first 50)" if len(hits) >= RESULT_WINDOW else ""
    note = f"{len(hits)} results{more}; {first + 1}–{first + len(shown)} shown."
    if answer.get("low_confidence"):
        note += " Low confidence: the best match is weak, the notes may not cover this."
    items = "".join(_hit(first + i + 1, hit, form.q) for i, hit in enumerate(shown))
    return (
        f'<p class="summary" role="status">{esc(note)}</p><ol class="hits" start="{first + 1}">{items}</ol>'
        + _pager(form, len(hits))
    )


def search_page(form: SearchForm, answer: Json | None, kb_name: str) -> str:
    body = search_form(form)
    if answer is not None:
        body += results_block(form, answer)
    else:
        body += '<p class="hint">Type words or a question; press <kbd>/</kbd> to come back to the box.</p>'
    title = f"{form.q} – search" if form.q else "Search"
    return page(title, body, current=UI_PATH, script=True, kb_name=kb_name)


# -- status -----------------------------------------------------------------------------------------
@attrs.frozen
class StatusInfo:
    """What the status panel shows; ``error`` replaces the rest when the index cannot be read."""

    kb: str
    index: str
    documents: int = 0
    chunks: int = 0
    model: str = ""
    dimension: str = ""
    model_loaded: bool = False
    awaiting_reread: int = 0
    last_indexed: str | None = None
    skipped: int = 0
    skips: tuple[tuple[str, str], ...] = ()
    watcher: bool = False
    error: str | None = None


def _row(label: str, value: object) -> str:
    return f'<tr><th scope="row">{esc(label)}</th><td>{esc(value)}</td></tr>'


def status_page(info: StatusInfo, kb_name: str) -> str:
    rows = [_row("Knowledge base", info.kb), _row("Index", info.index)]
    if info.error is not None:
        body = f'<h1>Status</h1><table class="status">{"".join(rows)}</table>{error_block(info.error)}'
        return page("Status", body, current=f"{UI_PATH}/status", kb_name=kb_name)
    rows += [
        _row("Documents", info.documents),
        _row("Chunks", info.chunks),
        _row("Model", f"{info.model} ({info.dimension} dim)" + ("" if info.model_loaded else ", loading")),
        _row("Awaiting re-read", f"{info.awaiting_reread} document(s)" if info.awaiting_reread else "none"),
        _row("Last change indexed", info.last_indexed or "never"),
        _row("Watching for changes", "yes" if info.watcher else "no"),
        _row("Last index run", f"{info.skipped} file(s) skipped" if info.skipped else "no warnings"),
    ]
    skips = "".join(f"<li><code>{esc(path)}</code>: {esc(reason)}</li>" for path, reason in info.skips)
    warn = f'<h2>Skipped in the last run</h2><ul class="skips">{skips}</ul>' if skips else ""
    body = f'<h1>Status</h1><table class="status">{"".join(rows)}</table>{warn}'
    return page("Status", body, current=f"{UI_PATH}/status", kb_name=kb_name)
