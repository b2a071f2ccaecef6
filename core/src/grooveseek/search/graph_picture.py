"""The connection graph as a picture of documents (R8.19; issue 24 item 8, issue 25).

A walk returns chunks, but a person asks which *documents* are related. Here the chunks are
grouped by path: each document is one box (its sections inside: the start document lists the
headings that seeded the walk, every other box how many of its sections were reached and the
first of their headings), placed in a column by the depth at which the walk first reached it.
A column taller than the picture wraps into sub-columns, and the number of rows is chosen so the
whole picture keeps a laptop screen's shape: a default walk (100 chunks over some 30 documents)
is about 1500 x 800 px instead of one box per chunk stacked 3,600 px high.

Edges join documents (the best similarity of the chunk edges between them labels the edge, at the
child's end) and run through the gaps between boxes, never across one; edges between documents in
one column are left out. A walk cut short by a bound
says so in a grey note under the title: the bounds are doing their job, so no red alarm.

``render_picture`` draws a standalone SVG (with its own ``<style>``) for ``groove graph --format
svg``, or, with ``standalone=False`` and a ``link`` for each path, the SVG the web page inlines:
no style element (the page's Content-Security-Policy allows only its stylesheet, which serves
``PICTURE_CSS``) and every document box a link.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence

import attrs

from .graph import GraphNode, GraphResult

# Depth 0..3 (R6.64 caps depth at 3): warm seeds, then cooler colours as the walk moves away.
DEPTH_COLOURS = ("#f6c453", "#8fd0c8", "#a9c8f0", "#d3b8ee")

BOX_W = 240
BOX_H = 56  # title, path and a sections line
ROW_H = 68
SUB_GAP = 56  # between sub-columns of one depth: room for an edge's route and score label
GROUP_GAP = 96  # between depths
MARGIN = 20
LINE_H = 17
START_LINES = 8  # headings listed inside the start document's box
TARGET_ASPECT = 1.9  # a laptop screen below a page header
TITLE_CHARS = 34
PATH_CHARS = 40
CHAR_W = 6.6  # rough width of one 11px header character, to size the canvas

# XML 1.0 forbids most C0 controls even when escaped; PDF text and pasted notes do contain them.
_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")

PICTURE_CSS = "".join(
    [
        "svg.graph text{font-family:Helvetica,Arial,sans-serif;fill:#222}",
        "svg.graph .title{font-size:15px;font-weight:bold}",
        "svg.graph .stats,svg.graph .legend{font-size:11px;fill:#555}",
        "svg.graph .note{font-size:11px;fill:#666;font-style:italic}",
        "svg.graph .doc-title{font-size:12px;font-weight:bold}",
        "svg.graph .doc-path,svg.graph .doc-sections{font-size:10.5px;fill:#444}",
        # a white halo keeps a score readable where it sits on top of an edge
        "svg.graph .score{font-size:10px;fill:#333;text-anchor:end;paint-order:stroke;stroke:#fff;"
        "stroke-width:3px}",
        "svg.graph .edge{fill:none;stroke:#8a8a8a;stroke-width:1.2}",
        "svg.graph .edge.minor{stroke:#c4c4c4;stroke-width:0.8}",
        "svg.graph .doc rect{stroke:#555;stroke-width:0.8}",
        "svg.graph a:focus rect,svg.graph a:hover rect{stroke:#1a56c4;stroke-width:2.5}",
    ]
)


def depth_colour(depth: int) -> str:
    return DEPTH_COLOURS[min(max(depth, 0), len(DEPTH_COLOURS) - 1)]


def xml_text(text: str) -> str:
    """Escape for XML text and attribute values, dropping characters XML cannot carry."""
    text = _XML_INVALID.sub("", text)
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def clip_left(text: str, width: int) -> str:
    """Keep the end of a path (the file name says most) when it is too long."""
    return text if len(text) <= width else "…" + text[-(width - 1) :]


def clip_right(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


# -- the documents ----------------------------------------------------------------------------------
@attrs.frozen
class DocBox:
    """One document of the walk: its chunks in walk order, the depth it was first reached at and
    the best similarity of any of its chunks (1.0 for the start document)."""

    path: str
    title: str | None
    depth: int
    chunks: tuple[GraphNode, ...]
    score: float

    def headings(self) -> list[str]:
        """Distinct section names of its chunks in walk order (a heading, else the snippet's start)."""
        seen: dict[str, None] = {}
        for node in self.chunks:
            label = node.heading or " ".join(node.snippet.split())[:60] or "(untitled)"
            seen.setdefault(label, None)
        return list(seen)


def document_boxes(result: GraphResult) -> list[DocBox]:
    """The walk's documents in the order the walk first reached them."""
    grouped: dict[str, list[GraphNode]] = {}
    for node in result.nodes:
        grouped.setdefault(node.path, []).append(node)
    return [
        DocBox(
            path=path,
            title=next((n.title for n in nodes if n.title), None),
            depth=min(n.depth for n in nodes),
            chunks=tuple(nodes),
            score=max(n.score for n in nodes),
        )
        for path, nodes in grouped.items()
    ]


def document_edges(result: GraphResult, boxes: Sequence[DocBox]) -> dict[tuple[str, str], float]:
    """(parent path, child path) -> the best chunk similarity between them, for edges that go from
    a shallower column to a deeper one (a chunk edge inside one document or one column is left out)."""
    depth = {box.path: box.depth for box in boxes}
    by_id = {node.node_id: node for node in result.nodes}
    edges: dict[tuple[str, str], float] = {}
    for node in result.nodes:
        if node.parent_id is None:
            continue
        parent = by_id[node.parent_id].path
        if depth[parent] >= depth[node.path]:
            continue
        key = (parent, node.path)
        edges[key] = max(edges.get(key, 0.0), node.score)
    return edges


# -- layout -----------------------------------------------------------------------------------------
@attrs.frozen
class Layout:
    width: int
    height: int
    top: float  # where the boxes start, below the header
    pos: dict[str, tuple[float, float]]  # box top-left by path
    heights: dict[str, float]


def box_height(box: DocBox) -> float:
    if box.depth > 0:
        return BOX_H
    shown = min(len(box.headings()), START_LINES) + (1 if len(box.headings()) > START_LINES else 0)
    return 55 + 15 * shown  # title, path, the seed count, then the headings


def _columns(groups: Sequence[Sequence[DocBox]], rows: int) -> int:
    return sum(math.ceil(len(group) / rows) for group in groups)


def _extent(groups: Sequence[Sequence[DocBox]], rows: int, start_h: float) -> tuple[float, float]:
    """Width and height of the boxes' area with ``rows`` boxes per sub-column."""
    cols = [math.ceil(len(group) / rows) for group in groups]
    width = sum(n * BOX_W + (n - 1) * SUB_GAP for n in cols if n) + GROUP_GAP * max(
        0, sum(1 for n in cols if n) - 1
    )
    tallest = max((min(rows, len(group)) for group in groups[1:] if group), default=0)
    return width, max(start_h, tallest * ROW_H - (ROW_H - BOX_H))


def choose_rows(groups: Sequence[Sequence[DocBox]], start_h: float, header_h: float) -> int:
    """Boxes per sub-column: the count whose picture is closest to ``TARGET_ASPECT`` (ties: fewer rows)."""
    most = max((len(group) for group in groups[1:]), default=1) or 1
    best, best_cost = most, math.inf
    for rows in range(1, most + 1):
        width, height = _extent(groups, rows, start_h)
        cost = abs(math.log((width + 2 * MARGIN) / (height + header_h + MARGIN) / TARGET_ASPECT))
        if cost < best_cost - 1e-9:
            best, best_cost = rows, cost
    return best


def layout(boxes: Sequence[DocBox], header_h: float, header_w: float) -> Layout:
    """Columns by depth, each wrapped into sub-columns of the chosen number of rows."""
    groups: list[list[DocBox]] = [[] for _ in range(max((b.depth for b in boxes), default=0) + 1)]
    for box in boxes:
        groups[box.depth].append(box)
    for group in groups[1:]:
        group.sort(key=lambda box: -box.score)  # strongest first, read down each column
    heights = {box.path: box_height(box) for box in boxes}
    # The start column holds the start document (one box); any other depth-0 path stacks below it.
    start_h = sum(heights[b.path] for b in groups[0]) + (len(groups[0]) - 1) * (ROW_H - BOX_H)
    rows = choose_rows(groups, start_h, header_h)
    pos: dict[str, tuple[float, float]] = {}
    x, top = float(MARGIN), header_h
    for depth, group in enumerate(groups):
        if not group:
            continue
        if depth == 0:
            y = top
            for box in group:
                pos[box.path] = (x, y)
                y += heights[box.path] + ROW_H - BOX_H
            x += BOX_W + GROUP_GAP
            continue
        for i, box in enumerate(group):
            pos[box.path] = (x + (i // rows) * (BOX_W + SUB_GAP), top + (i % rows) * ROW_H)
        x += math.ceil(len(group) / rows) * (BOX_W + SUB_GAP) - SUB_GAP + GROUP_GAP
    width, height = _extent(groups, rows, start_h)
    return Layout(
        width=int(max(width + 2 * MARGIN, header_w)),
        height=int(top + height + MARGIN),
        top=top,
        pos=pos,
        heights=heights,
    )


# -- drawing ----------------------------------------------------------------------------------------
def _stats_line(result: GraphResult, boxes: Sequence[DocBox]) -> str:
    s = result.stats
    # No duration: the same walk draws the same picture (the JSON answer carries the timing).
    return (
        f"{len(boxes)} documents, {s.total_nodes} sections; depth reached {s.max_depth_reached}; "
        f"{s.knn_queries} neighbour searches"
    )


def _note(result: GraphResult) -> str | None:
    """A calm sentence for a walk its bounds cut short (R8.19: stated visibly, not as an alarm)."""
    parts = []
    for t in result.truncation:
        if t.reason == "seed_chunks":
            parts.append(f"the first {t.limit} sections of the start document seeded it (max_seed_chunks)")
        else:
            parts.append(f"it stopped at {t.limit} sections (max_nodes)")
    return "Partial view (truncated): " + "; ".join(parts) + "." if parts else None


def header_lines(result: GraphResult, boxes: Sequence[DocBox]) -> list[tuple[str, str]]:
    """(css class, text) lines above the picture."""
    lines = [("title", f"Connection graph from: {result.start_path}"), ("stats", _stats_line(result, boxes))]
    note = _note(result)
    if note is not None:
        lines.append(("note", note))
    return lines


def _tooltip(box: DocBox) -> str:
    first = box.chunks[0]
    where = "start document" if box.depth == 0 else f"depth {box.depth}, best similarity {box.score:.3f}"
    lines = [box.path, where, *(f"· {h}" for h in box.headings()[:12])]
    if first.snippet:
        lines.append(first.snippet)
    return "\n".join(lines)


def _box_lines(box: DocBox) -> list[tuple[str, str]]:
    name = box.title or box.path.rsplit("/", 1)[-1]
    lines = [("doc-title", clip_right(name, TITLE_CHARS)), ("doc-path", clip_left(box.path, PATH_CHARS))]
    headings = box.headings()
    if box.depth == 0:
        seeds = len(box.chunks)
        lines.append(("doc-sections", f"{seeds} section{'s' if seeds != 1 else ''} seeded the walk:"))
        lines += [("doc-sections", "· " + clip_right(h, PATH_CHARS - 2)) for h in headings[:START_LINES]]
        if len(headings) > START_LINES:
            lines.append(("doc-sections", f"… and {len(headings) - START_LINES} more sections"))
        return lines
    count = len(box.chunks)
    label = f"{count} section{'s' if count != 1 else ''}: {headings[0]}"
    return [*lines, ("doc-sections", clip_right(label, PATH_CHARS))]


def _draw_box(index: int, box: DocBox, x: float, y: float, h: float, link: str | None) -> list[str]:
    out = [
        f'<g class="doc" id="d{index}"><title>{xml_text(_tooltip(box))}</title>',
        f'<rect x="{x:.1f}" y="{y:.1f}" width="{BOX_W}" height="{h:.0f}" rx="6" '
        f'fill="{depth_colour(box.depth)}"/>',
    ]
    for i, (cls, text) in enumerate(_box_lines(box)):
        out.append(f'<text x="{x + 8:.1f}" y="{y + 16 + 15 * i:.1f}" class="{cls}">{xml_text(text)}</text>')
    out.append("</g>")
    if link is None:
        return out
    return [f'<a href="{xml_text(link)}" class="doclink">', *out, "</a>"]


def edge_path(parent: tuple[float, float, float], child: tuple[float, float]) -> str:
    """An orthogonal route through the gaps between boxes, never across one: out of the parent's
    right side into the gap beside it, along that gap to the row gap just above the child's row,
    along the row gap to the gap left of the child, and into the child's side. Rows line up across
    columns and gaps hold no boxes, so edges from one parent share a trunk and read as a tree."""
    px, py, ph = parent
    cx, cy = child
    lane = int(max(0.0, py) // ROW_H) % 6  # parents of one column leave by different lanes
    out_x, in_x = px + BOX_W + 6 + 5 * lane, cx - 12
    gap_y = cy - (ROW_H - BOX_H) / 2
    mid_p, mid_c = py + ph / 2, cy + BOX_H / 2
    return f"M{px + BOX_W:.1f},{mid_p:.1f} H{out_x:.1f} V{gap_y:.1f} H{in_x:.1f} V{mid_c:.1f} H{cx:.1f}"


def _draw_edges(edges: dict[tuple[str, str], float], lay: Layout) -> list[str]:
    best: dict[str, tuple[str, float]] = {}
    for (parent, child), score in edges.items():
        if child not in best or score > best[child][1]:
            best[child] = (parent, score)
    out = []
    for (parent, child), score in sorted(edges.items(), key=lambda item: best[item[0][1]][0] == item[0][0]):
        px, py = lay.pos[parent]
        cls = "edge" if best[child][0] == parent else "edge minor"  # the best edges are drawn last, on top
        d = edge_path((px, py, lay.heights[parent]), lay.pos[child])
        out.append(f'<path class="{cls}" d="{d}"><title>{score:.3f}</title></path>')
    for child, (_, score) in best.items():
        cx, cy = lay.pos[child]
        out.append(f'<text class="score" x="{cx - 14:.1f}" y="{cy + BOX_H / 2 - 4:.1f}">{score:.3f}</text>')
    return out


def _legend(max_depth: int, y: float) -> list[str]:
    out = []
    for depth in range(max_depth + 1):
        x = MARGIN + depth * 120
        label = "start document" if depth == 0 else f"reached at depth {depth}"
        out.append(
            f'<rect x="{x}" y="{y - 10:.1f}" width="12" height="12" rx="2" fill="{depth_colour(depth)}"/>'
        )
        out.append(f'<text x="{x + 17}" y="{y:.1f}" class="legend">{label}</text>')
    return out


def render_picture(
    result: GraphResult, *, standalone: bool = True, link: Callable[[str], str] | None = None
) -> str:
    """The picture as SVG text: a standalone document, or (``standalone=False``) an element to inline
    in a page whose stylesheet carries ``PICTURE_CSS``; ``link(path)`` makes each box a link."""
    boxes = document_boxes(result)
    header = header_lines(result, boxes)
    legend_y = MARGIN + LINE_H * len(header) + 14
    header_w = MARGIN * 2 + max(len(text) for _, text in header) * CHAR_W
    lay = layout(boxes, legend_y + 22, header_w)
    size = f'width="{lay.width}" height="{lay.height}" viewBox="0 0 {lay.width} {lay.height}"'
    body = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="graph" {size} role="img" '
        f'aria-label="{xml_text(header[0][1])}">',
        f"<title>{xml_text(header[0][1])}</title>",
    ]
    if standalone:
        body.append(f"<style>{PICTURE_CSS}</style>")
    body.append(f'<rect width="{lay.width}" height="{lay.height}" fill="#ffffff"/>')
    for i, (cls, text) in enumerate(header):
        body.append(
            f'<text x="{MARGIN}" y="{MARGIN + LINE_H * i + 12}" class="{cls}">{xml_text(text)}</text>'
        )
    body += _legend(max((b.depth for b in boxes), default=0), legend_y)
    body += _draw_edges(document_edges(result, boxes), lay)
    for i, box in enumerate(boxes):
        x, y = lay.pos[box.path]
        body += _draw_box(i, box, x, y, lay.heights[box.path], link(box.path) if link else None)
    body.append("</svg>")
    svg = "\n".join(body) + "\n"
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + svg if standalone else svg
