"""The connection graph page: the picture of documents, explorable (issue 25).

The picture is ``search.graph_picture``'s SVG, inlined without its style element (the page's
stylesheet serves ``PICTURE_CSS``) and with every document box a link to its document view. The
page's script pans and zooms it (drag, wheel, arrow keys, ``+``/``-``/``0``, the buttons); without
the script it is still a whole picture fitted to the screen. Depth, fan-out and size are the
walk's own knobs (``GraphParams`` clamps them, R6.64); a list of the documents under the picture
is the same set of links for keyboards and screen readers.
"""

from __future__ import annotations

from typing import Any

import attrs

from ..search.graph import GraphResult
from ..search.graph_picture import document_boxes, render_picture
from .html import UI_PATH, error_block, esc, page, url

DEFAULT_DEPTH = 2
DEFAULT_FAN_OUT = 5
#: Chunks walked by default: about 15-25 documents, a picture that reads at a glance on a laptop.
DEFAULT_MAX_NODES = 50
SIZES = (20, 50, 100, 200, 500)


def _number(query: Any, key: str, default: int, low: int, high: int) -> int:
    try:
        return max(low, min(high, int(query.get(key) or default)))
    except ValueError:
        return default


@attrs.frozen
class GraphForm:
    start: str = ""
    depth: int = DEFAULT_DEPTH
    fan_out: int = DEFAULT_FAN_OUT
    max_nodes: int = DEFAULT_MAX_NODES

    @classmethod
    def from_query(cls, query: Any) -> GraphForm:
        return cls(
            start=(query.get("start") or "").strip(),
            depth=_number(query, "depth", DEFAULT_DEPTH, 0, 3),
            fan_out=_number(query, "fan_out", DEFAULT_FAN_OUT, 0, 20),
            max_nodes=_number(query, "max_nodes", DEFAULT_MAX_NODES, 1, 2000),
        )


def _select(name: str, label: str, current: int, choices: list[int] | tuple[int, ...]) -> str:
    options = "".join(
        f'<option value="{n}"{" selected" if n == current else ""}>{n}</option>' for n in choices
    )
    return f'<label>{esc(label)} <select name="{name}">{options}</select></label>'


def graph_form(form: GraphForm) -> str:
    sizes = sorted({*SIZES, form.max_nodes})
    return (
        f'<form class="graph-form" method="get" action="{UI_PATH}/graph">'
        f'<label>From <input type="text" name="start" value="{esc(form.start)}" size="40" '
        'placeholder="path/of/a/document.md" required></label>'
        + _select("depth", "Depth", form.depth, list(range(4)))
        + _select("fan_out", "Fan-out", form.fan_out, list(range(1, 21)))
        + _select("max_nodes", "Sections", form.max_nodes, sizes)
        + '<button type="submit">Draw</button></form>'
    )


def doc_link(path: str) -> str:
    return url(f"{UI_PATH}/doc", {"path": path})


def _controls() -> str:
    buttons = (("zoom-in", "+", "Zoom in"), ("zoom-out", "−", "Zoom out"), ("zoom-reset", "⤢", "Fit"))
    return (
        '<div class="zoom" role="toolbar" aria-label="Zoom">'
        + "".join(
            f'<button type="button" data-action="{action}" aria-label="{label}" title="{label}">'
            f"{glyph}</button>"
            for action, glyph, label in buttons
        )
        + "</div>"
    )


def _doc_list(result: GraphResult) -> str:
    items = []
    for box in document_boxes(result):
        score = "start" if box.depth == 0 else f"{box.score:.3f}, depth {box.depth}"
        name = box.title or box.path
        items.append(
            f'<li><a href="{esc(doc_link(box.path))}">{esc(name)}</a> <code>{esc(box.path)}</code> '
            f'<span class="score">({esc(score)})</span></li>'
        )
    return (
        '<details class="doc-list"><summary>Documents in this picture</summary>'
        f"<ol>{''.join(items)}</ol></details>"
    )


def graph_page(form: GraphForm, result: GraphResult | None, error: str | None, kb_name: str) -> str:
    body = "<h1>Connections</h1>" + graph_form(form)
    if error is not None:
        body += error_block(error)
    elif result is None:
        body += (
            '<p class="hint">Open a search hit\'s <em>connections</em> link, or type the path of a '
            "document to see the documents most similar to it.</p>"
        )
    else:
        svg = render_picture(result, standalone=False, link=doc_link)
        body += (
            '<div class="graph-view" id="graph" tabindex="0" aria-label="Connection graph: arrow keys '
            'pan, + and - zoom, 0 fits; Tab moves between documents, Enter opens one">'
            f"{_controls()}{svg}</div>{_doc_list(result)}"
        )
    title = f"Connections of {form.start}" if form.start else "Connections"
    return page(title, body, script=True, kb_name=kb_name, wide=True)
