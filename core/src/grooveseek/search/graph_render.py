"""Presentations of a ``GraphResult``: the R8.18 text, a Graphviz digraph and a self-contained SVG (R8.19).

The digraph keeps one node per chunk (Graphviz lays it out). The SVG is the picture of documents
drawn by ``graph_picture`` with no drawing dependency. Layout and labels are presentation, not
contract (R8.4); what is promised is that nodes are coloured by depth, edges carry the similarity,
and a walk that a bound cut short says so visibly.
"""

from __future__ import annotations

from .graph import GraphNode, GraphResult
from .graph_picture import DEPTH_COLOURS, depth_colour, render_picture

__all__ = ["DEPTH_COLOURS", "render_dot", "render_svg", "render_text"]

TRUNCATION_COLOUR = "#666666"  # stated, not alarmed: the bounds are doing their job
TRUNCATION_FILL = "#f2f2f2"


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
def render_svg(result: GraphResult) -> str:
    """A standalone SVG document: the documents of the walk as boxes (``graph_picture``)."""
    return render_picture(result)
