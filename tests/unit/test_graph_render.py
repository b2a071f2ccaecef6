"""Renderers of a connection graph (SPEC R8.18, R8.19): text lines, a Graphviz digraph, a standalone SVG."""

from __future__ import annotations

import itertools
import re
import xml.etree.ElementTree as ET

from grooveseek.search.graph import GraphNode, GraphResult, GraphStats, Truncation
from grooveseek.search.graph_render import DEPTH_COLOURS, render_dot, render_svg, render_text

SVG = "{http://www.w3.org/2000/svg}"


def _node(node_id, parent_id, depth, path, *, heading="H", title="T", snippet="snip", score=None):
    score = 1.0 if score is None else score
    return GraphNode(node_id, parent_id, depth, 100 + node_id, score, path, heading, title, None, snippet)


def _result(truncated: bool = True) -> GraphResult:
    nodes = (
        _node(0, None, 0, "start.md", heading="Intro", title="Start"),
        _node(1, 0, 1, "a.md", heading=None, title=None, snippet="line one\nline two", score=0.8123),
        _node(2, 0, 1, 'we"ird\\name.md', heading="Q & <A>", score=0.7),
        _node(3, 1, 2, "deep/b.md", snippet="form\x0cfeed and \x00 nul", score=0.6),
        _node(4, 1, 2, "deep/c.md", score=0.55),
        _node(5, None, 0, "start.md", heading="Second", title="Start"),
    )
    truncation = (Truncation("node_budget", 6, "raise max_nodes"),) if truncated else ()
    return GraphResult("start.md", nodes, GraphStats(6, 2, 3, 2, 17), truncation)


# -- text -----------------------------------------------------------------------------------------
def test_text_format_lines():
    lines = render_text(_result()).split("\n")
    assert lines[:3] == [
        "# Connection graph from: start.md",
        "nodes=6 max_depth=2 knn_queries=3 seeds_used=2 duration_ms=17",
        "! truncated: node_budget (limit 6): raise max_nodes",
    ]
    assert lines[3:12] == [
        "",
        "[  0] depth=0 parent=- score=1.000  start.md#Intro",
        "     title: Start",
        "     snip",
        "",
        "[  1] depth=1 parent=0 score=0.812  a.md",  # no heading: the bare path, as search's text does
        "     line one",
        "     line two",  # every snippet line stays indented under its node
        "",
    ]
    headers = [line for line in lines if line.startswith("[")]
    assert len(headers) == 6 and headers[3] == "[  3] depth=2 parent=1 score=0.600  deep/b.md#H"


def test_text_without_truncation_has_no_truncated_line():
    assert "! truncated" not in render_text(_result(truncated=False))


# -- dot ------------------------------------------------------------------------------------------
_DOT_STRING = r'"(?:[^"\\]|\\.)*"'


def _dot_statements(dot: str) -> list[str]:
    """Split the body into statements, respecting quoted strings (enough of DOT to check structure)."""
    body = re.fullmatch(r"digraph (\w+) \{\n(.*)\n\}", dot, re.DOTALL)
    assert body, "not a digraph"
    text = re.sub(_DOT_STRING, '"…"', body.group(2))  # strings may contain ; [ ] -> and braces
    assert text.count("[") == text.count("]") and "{" not in text and "}" not in text
    return [s.strip() for s in text.split(";") if s.strip()]


def test_dot_is_a_digraph_with_one_statement_per_node_and_edge():
    result = _result()
    dot = render_dot(result)
    statements = _dot_statements(dot)
    node_ids = [m.group(1) for s in statements if (m := re.fullmatch(r"n(\d+) \[.*\]", s))]
    edges = [m.groups() for s in statements if (m := re.fullmatch(r"n(\d+) -> n(\d+) \[.*\]", s))]
    assert node_ids == [str(n.node_id) for n in result.nodes]
    assert edges == [(str(n.parent_id), str(n.node_id)) for n in result.nodes if n.parent_id is not None]
    assert 'n0 -> n1 [label="0.812"]' in dot
    assert r'label="we\"ird\\name.md\nQ & <A>"' in dot  # quotes and backslashes escaped
    for node in result.nodes:
        assert f"n{node.node_id} [label=" in dot and f'fillcolor="{DEPTH_COLOURS[node.depth]}"' in dot


def test_dot_states_truncation_visibly_only_when_cut():
    assert "TRUNCATED" in render_dot(_result()) and "truncated [shape=note" in render_dot(_result())
    assert "TRUNCATED" not in render_dot(_result(truncated=False))


# -- svg ------------------------------------------------------------------------------------------
def _svg_root(result: GraphResult) -> ET.Element:
    return ET.fromstring(render_svg(result).encode("utf-8"))  # control characters in snippets were dropped


def test_svg_draws_one_box_per_document_coloured_by_first_depth():
    result = _result()
    root = _svg_root(result)
    assert root.tag == f"{SVG}svg"
    groups = root.findall(f"{SVG}g")
    # start.md holds nodes 0 and 5: one box, listing both seeding sections.
    assert len(groups) == 5
    texts = ["".join(g.itertext()) for g in groups]
    assert "start.md" in texts[0] and "Intro" in texts[0] and "Second" in texts[0]
    assert "2 sections seeded the walk" in texts[0]
    fills = {
        next(t for t in g.itertext() if t.endswith(".md")): g.find(f"{SVG}rect").get("fill") for g in groups
    }
    assert fills["start.md"] == DEPTH_COLOURS[0] and fills["a.md"] == DEPTH_COLOURS[1]
    assert fills["deep/b.md"] == DEPTH_COLOURS[2]


def test_svg_edges_join_documents_and_carry_the_best_similarity():
    result = _result()
    root = _svg_root(result)
    edges = root.findall(f"{SVG}path")
    # start->a, start->weird, a->b, a->c: four document edges, each labelled once at its child.
    assert len(edges) == 4
    scores = sorted(t.text for t in root.findall(f"{SVG}text") if t.get("class") == "score")
    assert scores == sorted(["0.812", "0.700", "0.600", "0.550"])


def test_svg_states_a_cut_walk_calmly():
    root = _svg_root(_result())
    notes = [t.text for t in root.findall(f"{SVG}text") if t.get("class") == "note"]
    assert notes == ["Partial view (truncated): it stopped at 6 sections (max_nodes)."]
    assert "#c0392b" not in render_svg(_result())  # no red alarm: the bounds are doing their job


def test_svg_without_truncation_has_no_note():
    root = _svg_root(_result(truncated=False))
    assert not [t for t in root.findall(f"{SVG}text") if t.get("class") == "note"]


def test_svg_of_seeds_only_is_valid():
    result = GraphResult("s.md", (_node(0, None, 0, "s.md"),), GraphStats(1, 0, 0, 1, 0))
    root = _svg_root(result)
    assert len(root.findall(f"{SVG}g")) == 1 and not root.findall(f"{SVG}path")


def test_a_default_sized_walk_fits_a_laptop_screen():
    """Issue 24 item 8: 100 chunks over 34 documents (a real default walk from npm's config.md,
    32 seeds) drew one box per chunk, 1400 x 3663 px. As documents it keeps a screen's shape."""
    nodes = [_node(i, None, 0, "using-npm/config.md", heading=f"S{i % 3}") for i in range(32)]
    for i in range(32, 100):
        nodes.append(_node(i, i % 32, 1, f"commands/doc-{(i - 32) % 33}.md", score=0.4 + (i % 50) / 100))
    stats = GraphStats(100, 1, 17, 32, 43)
    cut = (Truncation("seed_chunks", 32, "x"), Truncation("node_budget", 100, "y"))
    root = _svg_root(GraphResult("using-npm/config.md", tuple(nodes), stats, cut))
    width, height = int(root.get("width")), int(root.get("height"))
    assert len(root.findall(f"{SVG}g")) == 34
    assert width <= 1600 and height <= 900 and 1.2 <= width / height <= 2.6, (width, height)


def test_edges_never_cross_a_box():
    """Routes run through the gaps: no segment of any edge enters a document box."""
    nodes = [_node(0, None, 0, "s.md")]
    nodes += [_node(i, 0, 1, f"a{i}.md", score=0.9 - i / 100) for i in range(1, 25)]
    nodes += [_node(i, 1 + i % 24, 2, f"b{i}.md", score=0.5) for i in range(25, 60)]
    root = _svg_root(GraphResult("s.md", tuple(nodes), GraphStats(60, 2, 25, 1, 5)))
    boxes = [
        tuple(float(r.get(k)) for k in ("x", "y", "width", "height"))
        for r in root.findall(f"{SVG}g/{SVG}rect")
    ]
    for edge in root.findall(f"{SVG}path"):
        points = _polyline(edge.get("d"))
        for (x1, y1), (x2, y2) in itertools.pairwise(points):
            for bx, by, bw, bh in boxes:
                inside_x = max(x1, x2) > bx + 0.5 and min(x1, x2) < bx + bw - 0.5
                inside_y = max(y1, y2) > by + 0.5 and min(y1, y2) < by + bh - 0.5
                assert not (inside_x and inside_y), (edge.get("d"), (bx, by))


def _polyline(d: str) -> list[tuple[float, float]]:
    """The points of an ``M x,y H x V y ...`` path."""
    tokens = re.findall(r"([MHV])([-\d.]+)(?:,([-\d.]+))?", d)
    points: list[tuple[float, float]] = []
    for op, a, b in tokens:
        if op == "M":
            points.append((float(a), float(b)))
        elif op == "H":
            points.append((float(a), points[-1][1]))
        else:
            points.append((points[-1][0], float(a)))
    return points
