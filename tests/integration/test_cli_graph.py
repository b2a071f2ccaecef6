"""End-to-end ``groove graph`` over the npm-docs index built with the real minilm-l6-int8 model."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from click.testing import CliRunner

pytestmark = pytest.mark.model

START = "commands/npm-root.md"
NODE_KEYS = [
    "node_id",
    "parent_id",
    "depth",
    "chunk_id",
    "score",
    "path",
    "heading",
    "title",
    "topic",
    "snippet",
]


def _graph(kb, *args: str) -> dict:
    result = kb.run("graph", "--start", START, *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_json_is_the_r6_63_shape(npm_kb):
    answer = _graph(npm_kb)
    assert list(answer) == ["start_path", "nodes", "stats", "truncated", "truncation"]
    assert answer["start_path"] == START
    nodes = answer["nodes"]
    assert nodes and all(list(n) == NODE_KEYS for n in nodes)
    assert [n["node_id"] for n in nodes] == list(range(len(nodes)))
    seeds = [n for n in nodes if n["depth"] == 0]
    assert seeds and all(n["path"] == START and n["parent_id"] is None and n["score"] == 1.0 for n in seeds)
    for n in nodes:
        if n["depth"] > 0:
            assert n["path"] != START and 0.3 <= n["score"] <= 1.0
            assert nodes[n["parent_id"]]["depth"] == n["depth"] - 1
    stats = answer["stats"]
    assert stats["total_nodes"] == len(nodes) and stats["seeds_used"] == len(seeds)
    assert stats["max_depth_reached"] == max(n["depth"] for n in nodes) <= 2
    assert stats["knn_queries"] <= stats["total_nodes"] <= 100
    assert answer["truncated"] == bool(answer["truncation"])
    assert len({n["chunk_id"] for n in nodes}) == len(nodes)


def test_the_walk_reaches_a_related_document(npm_kb):
    paths = {n["path"] for n in _graph(npm_kb, "--depth", "1")["nodes"]}
    assert "configuring-npm/folders.md" in paths  # npm root prints the folder that page describes


def test_node_budget_cut_on_real_data_is_a_prefix(npm_kb):
    full = _graph(npm_kb, "--max-nodes", "2000")
    cut = _graph(npm_kb, "--max-nodes", "7")
    assert not full["truncated"] and len(full["nodes"]) > 7
    assert cut["nodes"] == full["nodes"][:7]
    assert [(t["reason"], t["limit"]) for t in cut["truncation"]] == [("node_budget", 7)]


def test_centroid_seeds_once_and_filters_apply(npm_kb):
    answer = _graph(
        npm_kb,
        "--seed-strategy",
        "centroid",
        "--category",
        "commands",
        "--dedup-by-path",
        "--exclude-paths",
        "commands/npm-help.md,commands/npm-ci.md",
    )
    nodes = answer["nodes"]
    assert [n["depth"] for n in nodes].count(0) == 1 and answer["stats"]["seeds_used"] > 1
    later = [n["path"] for n in nodes[1:]]
    assert later and all(p.startswith("commands/") for p in later)
    assert len(later) == len(set(later)) and not {"commands/npm-help.md", "commands/npm-ci.md"} & set(later)


@pytest.mark.parametrize("fmt", ["json", "text", "dot", "svg"])
def test_every_format_exits_0(npm_kb, fmt):
    result = npm_kb.run("graph", "--start", START, "--format", fmt, "--max-nodes", "5")
    assert result.exit_code == 0, result.output
    out = result.stdout
    if fmt == "json":
        assert json.loads(out)["truncated"] is True
    elif fmt == "text":
        assert (
            out.startswith(f"# Connection graph from: {START}\nnodes=5 ")
            and "! truncated: node_budget" in out
        )
    elif fmt == "dot":
        assert (
            out.startswith("digraph connection_graph {") and out.rstrip().endswith("}") and "TRUNCATED" in out
        )
    else:
        root = ET.fromstring(out.encode("utf-8"))
        assert root.tag.endswith("svg") and START in "".join(root.itertext())


def test_unknown_start_path_exits_1_with_the_fix(npm_kb):
    result = npm_kb.run("graph", "--start", "missing.md")
    assert result.exit_code == 1
    assert "document not found (no chunks for path): missing.md. Run groove index" in result.stderr


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (
            ["--seed-strategy", "random"],
            "unknown seed_strategy 'random' (expected 'all_chunks' or 'centroid')",
        ),
        (["--exclude-paths", ",".join(f"p{i}" for i in range(65))], "exclude_paths has too many entries: 65"),
        (["--min-similarity", "nan"], "--min-similarity"),
        (["--format", "png"], "--format"),
    ],
)
def test_bad_flags_exit_2(npm_kb, args, needle):
    result = npm_kb.run("graph", "--start", START, *args)
    assert result.exit_code == 2 and needle in result.stderr


def test_out_of_range_numbers_are_clamped_not_refused(npm_kb):
    answer = _graph(npm_kb, "--depth", "9", "--fan-out", "99", "--max-nodes", "0", "--min-similarity", "7")
    assert len(answer["nodes"]) == 1 and answer["truncation"][0]["limit"] == 1


def test_no_index_exits_1_naming_the_database(tmp_path):
    from grooveseek.cli import cli

    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "a.md").write_text("# A\n\ntext\n", encoding="utf-8")
    config = tmp_path / "groove.toml"
    config.write_text('kb_path = "kb"\nmodel = "minilm-l6-int8"\n', encoding="utf-8")
    result = CliRunner().invoke(cli, ["--config", str(config), "graph", "--start", "a.md"])
    assert result.exit_code == 1
    from grooveseek.index.guard import db_path_for

    kb = (tmp_path / "kb").resolve()
    db = db_path_for(kb)
    assert f"No index found at {db}. Run groove index --kb-path {kb} first." in result.stderr
    assert not db.exists()
