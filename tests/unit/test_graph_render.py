"""Renderers of a connection graph (SPEC R8.18, R8.19): text lines, a Graphviz digraph, a standalone SVG."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from grooveseek.search.graph import GraphNode, GraphResult, GraphStats, Truncation
from grooveseek.search.graph_render import DEPTH_COLOURS, render_dot, render_svg, render_text, tree_rows

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
def test_svg_is_well_formed_and_contains_every_node_and_the_note():
    result = _result()
    svg = render_svg(result)
    root = ET.fromstring(svg.encode("utf-8"))  # control characters in snippets were dropped
    assert root.tag == f"{SVG}svg"
    text = "".join(root.itertext())
    for node in result.nodes:
        assert node.path in text
    assert "TRUNCATED: node_budget (limit 6)" in text and "raise max_nodes" in text
    groups = root.findall(f"{SVG}g")
    assert [g.get("id") for g in groups] == [f"n{n.node_id}" for n in result.nodes]
    fills = [g.find(f"{SVG}rect").get("fill") for g in groups]
    assert fills == [DEPTH_COLOURS[n.depth] for n in result.nodes]
    edges = root.findall(f"{SVG}path")
    assert len(edges) == sum(n.parent_id is not None for n in result.nodes)
    scores = [t.text for t in root.findall(f"{SVG}text") if t.get("class") == "score"]
    assert scores == [f"{n.score:.3f}" for n in result.nodes if n.parent_id is not None]


def test_svg_without_truncation_has_no_note():
    root = ET.fromstring(render_svg(_result(truncated=False)).encode("utf-8"))
    assert "TRUNCATED" not in "".join(root.itertext())


def test_svg_of_seeds_only_is_valid():
    result = GraphResult("s.md", (_node(0, None, 0, "s.md"),), GraphStats(1, 0, 0, 1, 0))
    root = ET.fromstring(render_svg(result).encode("utf-8"))
    assert len(root.findall(f"{SVG}g")) == 1 and not root.findall(f"{SVG}path")


def test_tree_layout_gives_each_leaf_a_row_and_centres_parents():
    rows = tree_rows(_result().nodes)
    # Depth-first leaf order: 3, 4 (children of 1), 2, 5. Node 1 sits between 3 and 4, node 0
    # between its first child (1) and last child (2).
    assert {k: rows[k] for k in (3, 4, 2, 5)} == {3: 0.0, 4: 1.0, 2: 2.0, 5: 3.0}
    assert rows[1] == pytest.approx(0.5) and rows[0] == pytest.approx((0.5 + 2.0) / 2)
