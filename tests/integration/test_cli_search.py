"""End-to-end, real minilm-l6-int8 model: ``groove index`` then ``groove search``/``status``/``eval``."""

from __future__ import annotations

import json
import re

import pytest

pytestmark = pytest.mark.model

HIT_KEYS = ["score", "path", "title", "heading", "topic", "date", "tags", "content"]


def _search(kb, *args: str) -> dict:
    result = kb.run("search", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_status_reports_the_real_model(npm_kb):
    result = npm_kb.run("status")
    assert result.exit_code == 0, result.output
    assert "Documents: 8" in result.stdout
    assert "Model: minilm-l6-int8 (384 dim)" in result.stdout
    assert "Quality filter (threshold=0.3)" in result.stdout


def test_english_semantic_query_finds_the_right_page(npm_kb):
    answer = _search(npm_kb, "where on disk do globally installed packages end up?", "--limit", "5")
    paths = [hit["path"] for hit in answer["results"]]
    assert {"configuring-npm/folders.md", "commands/npm-root.md"} & set(paths), paths


def test_result_shape_is_the_wire_contract(npm_kb):
    answer = _search(npm_kb, "deprecate a package version")
    assert list(answer) == ["results", "low_confidence", "filter_applied"]
    assert answer["filter_applied"] == {}
    assert isinstance(answer["low_confidence"], bool)
    for hit in answer["results"]:
        assert list(hit)[: len(HIT_KEYS)] == HIT_KEYS
        assert "uri" not in hit and "category" not in hit
        assert all(
            value is not None
            for key, value in hit.items()
            if key not in ("title", "heading", "topic", "date")
        )
    scores = [hit["score"] for hit in answer["results"]]
    assert scores == sorted(scores, reverse=True)
    assert 0 < scores[0] <= float(f"{2 / 61:.4g}")  # scores are rounded to 4 significant digits


def test_limit_is_respected_and_clamped(npm_kb):
    assert len(_search(npm_kb, "npm", "--limit", "2")["results"]) == 2
    assert len(_search(npm_kb, "npm", "--limit", "0")["results"]) == 1


def test_category_filter_is_applied_and_echoed(npm_kb):
    answer = _search(npm_kb, "install packages", "--category", "configuring-npm", "--limit", "10")
    assert answer["results"]
    assert all(hit["path"].startswith("configuring-npm/") for hit in answer["results"])
    assert answer["filter_applied"] == {"category": "configuring-npm"}


def test_exclusion_removes_matching_chunks_from_both_legs(npm_kb):
    answer = _search(npm_kb, "link packages -symlink", "--limit", "20")
    assert answer["filter_applied"]["excluded_terms"] == ["symlink"]
    assert all("symlink" not in hit["content"].lower() for hit in answer["results"])


def test_text_format(npm_kb):
    result = npm_kb.run("search", "explain why a package is installed", "--format", "text", "--limit", "2")
    assert result.exit_code == 0, result.output
    out = result.stdout
    if out.startswith("[low_confidence:"):
        assert out.startswith("[low_confidence: the top hit holds at most half of the query's words]\n")
        out = out.split("\n", 1)[1]
    blocks = out.split("\n---\n")
    assert len(blocks) == 2
    assert blocks[0].startswith("1. ") and blocks[1].startswith("2. ")  # rank, then the title
    assert re.match(r"commands/\S+\.md:\d+(-\d+)?(  #|$)", blocks[0].splitlines()[1])
    assert "score: " not in out and "lines: " not in out  # issue 24: no raw RRF score unless asked
    explained = npm_kb.run("search", "explain why a package is installed", "--format", "text", "--explain")
    assert "score: " in explained.stdout and "; rrf " in explained.stdout


def test_japanese_query_returns_japanese_results(jsprimer_kb):
    answer = _search(jsprimer_kb, "配列の要素を削除する方法", "--limit", "5")
    assert answer["results"]
    assert answer["results"][0]["path"] == "basic/array/README.md"
    assert any("配列" in hit["content"] for hit in answer["results"])


def test_two_character_cjk_query_gets_lexical_hits(jsprimer_kb):
    # 配列 is under the trigram floor: the trigram leg is skipped, the CJK bigram leg matches it.
    answer = _search(jsprimer_kb, "配列", "--explain")
    top = answer["results"][0]
    assert top["path"] == "basic/array/README.md"
    assert "配列" in top["content"]
    assert "cjk" in top["explain"]
    assert "fts" not in top["explain"]


def test_query_made_only_of_short_cjk_words(jsprimer_kb):
    answer = _search(jsprimer_kb, "配列 要素 削除", "--explain", "--limit", "5")
    assert all(
        "配列" in h["content"] or "要素" in h["content"] or "削除" in h["content"]
        for h in answer["results"][:3]
    )
    assert any("cjk" in h["explain"] for h in answer["results"])


def test_eval_reports_metrics_for_the_golden_subset(npm_kb, tmp_path):
    golden = tmp_path / "golden.yml"
    golden.write_text(
        "queries:\n"
        '  - query: "figure out what pulled a particular module into my node_modules"\n'
        '    expected: [{path: "commands/npm-explain.md"}]\n'
        '  - query: "where on disk do globally installed packages end up?"\n'
        '    expected: [{path: "configuring-npm/folders.md"}, {path: "commands/npm-root.md"}]\n',
        encoding="utf-8",
    )
    result = npm_kb.run("eval", "--golden", str(golden), "--format", "json", "--no-history")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["aggregate"]["query_count"] == 2
    assert report["aggregate"]["recall_at_k"]["10"] > 0.5
    assert report["fingerprint"]["model"] == "minilm-l6-int8"
    assert report["corpus"]["documents"] == 8


def test_fts_only_and_vector_only_eval_legs_run(npm_kb, tmp_path):
    golden = tmp_path / "g.yml"
    golden.write_text(
        'queries:\n  - query: "npm explain"\n    expected: [{path: "commands/npm-explain.md"}]\n'
    )
    for legs in ("fts", "vector"):
        result = npm_kb.run(
            "eval", "--golden", str(golden), "--legs", legs, "--format", "json", "--no-history"
        )
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["fingerprint"]["legs"] == legs


# -- chunks and answers (issue 10) ---------------------------------------------------------------------
def test_titles_anchors_and_lines_on_real_hits(jsprimer_kb):
    import sqlite3

    from grooveseek.index.guard import db_path_for

    answer = _search(jsprimer_kb, "配列の要素を削除する方法", "--limit", "10")
    array = next(hit for hit in answer["results"] if hit["path"] == "basic/array/README.md")
    assert array["title"] == "配列"  # the first "# " heading, its {#array} anchor removed
    for hit in answer["results"]:
        assert hit["title"] and "{#" not in hit["title"]
        assert hit["heading"] is None or "{#" not in hit["heading"]
        assert 1 <= hit["start_line"] <= hit["end_line"]
    assert any(hit.get("anchor") for hit in answer["results"])
    db = sqlite3.connect(f"file:{db_path_for(jsprimer_kb.kb)}?mode=ro", uri=True)
    try:
        rows = db.execute("select heading, start_line, end_line from chunks").fetchall()
    finally:
        db.close()
    assert rows and all(start is not None and end is not None for _, start, end in rows)
    assert not any(heading and "{#" in heading for heading, _, _ in rows)


def test_text_format_prints_a_snippet_at_path_line_and_full_on_request(jsprimer_kb):
    args = ("search", "配列の要素を削除する方法", "--limit", "1", "--format", "text")
    short = jsprimer_kb.run(*args)
    full = jsprimer_kb.run(*args, "--full")
    assert short.exit_code == 0 and full.exit_code == 0, short.output + full.output
    lines = [line for line in short.stdout.splitlines() if not line.startswith("[low_confidence")]
    path, span = lines[1].split("  #")[0].rsplit(":", 1)
    first, _, last = span.partition("-")
    assert path == "basic/array/README.md" and 1 <= int(first) <= int(last or first)
    # the printed lines are the snippet's own: its first line is in the file at that line
    snippet_first = short.stdout.split("\n\n", 1)[1].strip().removeprefix("…").splitlines()[0]
    source = (jsprimer_kb.kb / path).read_text(encoding="utf-8").splitlines()
    assert snippet_first.removesuffix("…").strip() in source[int(first) - 1]
    body = short.stdout.split("\n\n", 1)[1]
    assert len(body.strip().encode("utf-8")) <= 400 + 6
    assert len(full.stdout) >= len(short.stdout)


def test_span_units_chars_index_the_python_string_where_bytes_index_its_utf8(jsprimer_kb):
    as_bytes = _search(jsprimer_kb, "配列の要素を削除する方法", "--limit", "3")["results"]
    as_chars = _search(jsprimer_kb, "配列の要素を削除する方法", "--limit", "3", "--span-units", "chars")[
        "results"
    ]
    pairs = [(b, c) for b, c in zip(as_bytes, as_chars, strict=True) if b.get("match_spans")]
    assert pairs and any(
        s["end"] != t["end"]
        for b, c in pairs
        for s, t in zip(b["match_spans"], c["match_spans"], strict=True)
    )
    for b, c in pairs:
        raw = b["content"].encode("utf-8")
        by_bytes = [raw[s["start"] : s["end"]].decode("utf-8") for s in b["match_spans"]]
        assert [c["content"][s["start"] : s["end"]] for s in c["match_spans"]] == by_bytes
        assert any(not text.isascii() for text in by_bytes)
