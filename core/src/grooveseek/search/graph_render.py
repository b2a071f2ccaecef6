"""Presentations of a ``GraphResult``: the R8.18 text, a Graphviz digraph and a self-contained SVG (R8.19).

The SVG is laid out here, with no drawing dependency: a left-to-right tree, one column per depth
and one row per leaf, each parent centred on its children. Layout and labels are presentation, not
contract (R8.4); what is promised is that nodes are coloured by depth, edges carry the similarity,
and a walk that a bound cut short says so visibly.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .graph import GraphNode, GraphResult

# Depth 0..3 (R6.64 caps depth at 3): warm seeds, then cooler colours as the walk moves away.
DEPTH_COLOURS = ("#f6c453", "#8fd0c8", "#a9c8f0", "#d3b8ee")
TRUNCATION_COLOUR = "#c0392b"
TRUNCATION_FILL = "#fdecea"

# XML 1.0 forbids most C0 controls even when escaped; PDF text and pasted notes do contain them.
_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def depth_colour(depth: int) -> str:
    return DEPTH_COLOURS[min(max(depth, 0), len(DEPTH_COLOURS) - 1)]


def _anchor(node: GraphNode) -> str:
    return f"{node.path}#{node.heading}" if node.heading else node.path


def _truncation_lines(result: GraphResult) -> list[str]:
    return [f"! truncated: {t.reason} (limit {t.limit}): {t.detail}" for t in result.truncation]


def _stats_line(result: GraphResult) -> str:
    s = result.stats
    return (
        f"nodes={s.total_nodes} max_depth={s.max_depth_reached} knn_queries={s.knn_queries} "
        f"seeds_used={s.seeds_used} duration_ms={s.duration_ms}"
    )


# -- text (R8.18) -----------------------------------------------------------------------------------
def render_text(result: GraphResult) -> str:
    """Header, stats, one ``! truncated`` line per truncation, then a block per node.

    A snippet that spans several lines keeps every line indented, so a line starting with ``[`` is
    always a node header.
    """
    lines = [f"# Connection graph from: {result.start_path}", _stats_line(result), *_truncation_lines(result)]
    for node in result.nodes:
        parent = "-" if node.parent_id is None else str(node.parent_id)
        lines += [
            "",
            f"[{node.node_id:3d}] depth={node.depth} parent={parent} score={node.score:.3f}  {_anchor(node)}",
        ]
        if node.title is not None:
            lines.append(f"     title: {node.title}")
        lines += [f"     {line}" for line in (node.snippet.splitlines() or [""])]
    return "\n".join(lines)


# -- Graphviz DOT -----------------------------------------------------------------------------------
def _dot_str(text: str) -> str:
    """A DOT double-quoted string; newlines become the centred-line escape ``\\n``."""
    text = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + text.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "\\n") + '"'


def render_dot(result: GraphResult) -> str:
    """A ``digraph``: boxes filled by depth, edges labelled with the similarity, and, when a bound cut
    the walk, a red note node plus a line in the graph label."""
    header = [f"Connection graph from: {result.start_path}", _stats_line(result)]
    header += [f"TRUNCATED: {t.reason} (limit {t.limit})" for t in result.truncation]
    out = [
        "digraph connection_graph {",
        "  graph [rankdir=LR, labelloc=t, labeljust=l, fontname=Helvetica, "
        f"label={_dot_str(chr(10).join(header))}];",
        '  node [shape=box, style="rounded,filled", fontname=Helvetica, fontsize=10];',
        "  edge [fontname=Helvetica, fontsize=9];",
    ]
    for node in result.nodes:
        label = node.path + (f"\n{node.heading}" if node.heading else "")
        tooltip = f"{_anchor(node)} (depth {node.depth}, score {node.score:.3f})\n{node.snippet}"
        out.append(
            f"  n{node.node_id} [label={_dot_str(label)}, fillcolor={_dot_str(depth_colour(node.depth))}, "
            f"tooltip={_dot_str(tooltip)}];"
        )
    for node in result.nodes:
        if node.parent_id is not None:
            out.append(f"  n{node.parent_id} -> n{node.node_id} [label={_dot_str(f'{node.score:.3f}')}];")
    if result.truncation:
        note = "\n".join(
            ["TRUNCATED: a bound cut this walk short"]
            + [f"{t.reason} (limit {t.limit}): {t.detail}" for t in result.truncation]
        )
        out.append(
            f"  truncated [shape=note, style=filled, fillcolor={_dot_str(TRUNCATION_FILL)}, "
            f"color={_dot_str(TRUNCATION_COLOUR)}, fontcolor={_dot_str(TRUNCATION_COLOUR)}, "
            f"label={_dot_str(note)}];"
        )
    out.append("}")
    return "\n".join(out)


# -- SVG --------------------------------------------------------------------------------------------
BOX_W, BOX_H = 260, 38
COL_GAP = 80  # room for the edge's score label
ROW_H = 48
MARGIN = 20
LINE_H = 18
LABEL_CHARS = 40  # characters that fit in BOX_W at the node font size
CHAR_W = 7.0  # rough width of one header character, to size the canvas


def _x(text: str) -> str:
    """Escape for XML text and attribute values, dropping characters XML cannot carry."""
    text = _XML_INVALID.sub("", text)
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def _clip_left(text: str, width: int) -> str:
    """Keep the end of a path (the file name says most) when it is too long."""
    return text if len(text) <= width else "…" + text[-(width - 1) :]


def _clip_right(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def tree_rows(nodes: Sequence[GraphNode]) -> dict[int, float]:
    """Row of every node: leaves take consecutive rows in depth-first order (children in insertion
    order), and a parent sits at the midpoint of its first and last child."""
    children: dict[int, list[int]] = {n.node_id: [] for n in nodes}
    roots: list[int] = []
    for n in nodes:
        (roots if n.parent_id is None else children[n.parent_id]).append(n.node_id)
    rows: dict[int, float] = {}
    next_row = 0

    def place(node_id: int) -> float:  # depth ≤ 3, so recursion stays shallow
        nonlocal next_row
        kids = children[node_id]
        if not kids:
            rows[node_id] = float(next_row)
            next_row += 1
        else:
            placed = [place(kid) for kid in kids]
            rows[node_id] = (placed[0] + placed[-1]) / 2
        return rows[node_id]

    for root in roots:
        place(root)
    return rows


def _svg_header(result: GraphResult) -> list[tuple[str, str]]:
    """(css class, text) lines above the tree."""
    lines = [("title", f"Connection graph from: {result.start_path}"), ("stats", _stats_line(result))]
    for t in result.truncation:
        lines.append(("trunc", f"⚠ TRUNCATED: {t.reason} (limit {t.limit})"))
        lines.append(("trunc-detail", t.detail))
    return lines


def _svg_node(node: GraphNode, x: float, y: float) -> list[str]:
    line1 = _clip_left(node.path, LABEL_CHARS)
    line2 = _clip_right(node.heading or node.title or "", LABEL_CHARS)
    tip = f"{_anchor(node)}\ndepth {node.depth}, score {node.score:.3f}\n{node.snippet}"
    return [
        f'<g class="node" id="n{node.node_id}"><title>{_x(tip)}</title>',
        f'<rect x="{x:.1f}" y="{y:.1f}" width="{BOX_W}" height="{BOX_H}" rx="6" '
        f'fill="{depth_colour(node.depth)}"/>',
        f'<text x="{x + 8:.1f}" y="{y + 15:.1f}" class="path">{_x(line1)}</text>',
        f'<text x="{x + 8:.1f}" y="{y + 30:.1f}" class="heading">{_x(line2)}</text>',
        "</g>",
    ]


def _svg_edge(parent: tuple[float, float], child: tuple[float, float], score: float) -> list[str]:
    (px, py), (cx, cy) = parent, child
    bend = (cx - px) / 2
    return [
        f'<path class="edge" d="M{px:.1f},{py:.1f} C{px + bend:.1f},{py:.1f} '
        f'{cx - bend:.1f},{cy:.1f} {cx:.1f},{cy:.1f}"/>',
        f'<text class="score" x="{cx - 6:.1f}" y="{cy - 5:.1f}">{score:.3f}</text>',
    ]


def _svg_legend(max_depth: int, y: float) -> list[str]:
    out = []
    for depth in range(max_depth + 1):
        x = MARGIN + depth * 110
        label = "depth 0 (start)" if depth == 0 else f"depth {depth}"
        out.append(
            f'<rect x="{x}" y="{y - 11:.1f}" width="12" height="12" rx="2" fill="{depth_colour(depth)}"/>'
        )
        out.append(f'<text x="{x + 17}" y="{y:.1f}" class="legend">{label}</text>')
    return out


_SVG_STYLE = "".join(
    [
        "<style>text{font-family:Helvetica,Arial,sans-serif}.title{font-size:15px;font-weight:bold}",
        ".stats,.legend{font-size:11px;fill:#444}",
        f".trunc{{font-size:13px;font-weight:bold;fill:{TRUNCATION_COLOUR}}}",
        f".trunc-detail{{font-size:11px;fill:{TRUNCATION_COLOUR}}}",
        ".path{font-size:11px;font-weight:bold}.heading{font-size:11px}",
        # a white halo keeps a score readable where it sits on top of an edge
        ".score{font-size:10px;fill:#333;text-anchor:end;paint-order:stroke;stroke:#fff;stroke-width:3px}",
        ".edge{fill:none;stroke:#777;stroke-width:1.2}.node rect{stroke:#555;stroke-width:0.8}</style>",
    ]
)


def render_svg(result: GraphResult) -> str:
    """A standalone SVG document: header (with any truncation in red), a depth legend, then the tree."""
    header = _svg_header(result)
    legend_y = MARGIN + LINE_H * len(header) + 22
    tree_top = legend_y + 24
    rows = tree_rows(result.nodes)
    pos = {
        n.node_id: (MARGIN + n.depth * (BOX_W + COL_GAP), tree_top + rows[n.node_id] * ROW_H)
        for n in result.nodes
    }
    columns = max((n.depth for n in result.nodes), default=0) + 1
    leaf_rows = int(max(rows.values(), default=0)) + 1
    width = max(
        MARGIN * 2 + columns * BOX_W + (columns - 1) * COL_GAP,
        MARGIN * 2 + int(max(len(text) for _, text in header) * CHAR_W),
    )
    height = tree_top + leaf_rows * ROW_H + MARGIN
    body = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}">',
        f"<title>{_x(header[0][1])}</title>",
        _SVG_STYLE,
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
    ]
    if result.truncation:  # a red frame around the header makes a cut walk hard to miss
        top = MARGIN + LINE_H * 2 - 4
        body.append(
            f'<rect x="{MARGIN - 6}" y="{top}" width="{width - 2 * MARGIN + 12}" '
            f'height="{LINE_H * (len(header) - 2) + 8}" rx="4" fill="{TRUNCATION_FILL}" '
            f'stroke="{TRUNCATION_COLOUR}"/>'
        )
    for i, (cls, text) in enumerate(header):
        body.append(f'<text x="{MARGIN}" y="{MARGIN + LINE_H * i + 12}" class="{cls}">{_x(text)}</text>')
    body += _svg_legend(columns - 1, legend_y)
    for node in result.nodes:
        if node.parent_id is not None:
            px, py = pos[node.parent_id]
            cx, cy = pos[node.node_id]
            body += _svg_edge((px + BOX_W, py + BOX_H / 2), (cx, cy + BOX_H / 2), node.score)
    for node in result.nodes:
        body += _svg_node(node, *pos[node.node_id])
    body.append("</svg>")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + "\n".join(body) + "\n"
