"""``groove search`` with MMR, the parent retriever and match_spans, on the real minilm-l6-int8 index.

Expected values are derived from a second search of the same index (MMR or the parent retriever
off), never hard-coded, so the tests hold for any corpus the fixture carries.
"""

from __future__ import annotations

import itertools
import json

import pytest

from grooveseek.console import OncePerProcess
from grooveseek.search import mmr
from grooveseek.search.query import compile_query

pytestmark = pytest.mark.model

REQUIRED = ["score", "path", "title", "heading", "topic", "date", "tags", "content"]
OPTIONAL = ["match_spans", "expanded_from", "section", "start_line", "end_line", "symbol_kind"]
NULLABLE = {"title", "heading", "topic", "date"}
QUERY = "install packages globally"


def _search(kb, *args: str) -> list[dict]:
    result = kb.run("search", *args)
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    for hit in answer["results"]:
        _check_shape(hit)
    return answer["results"]


def _check_shape(hit: dict) -> None:
    """R6.53: the required keys in order, then optional keys in order, absent rather than null."""
    keys = list(hit)
    assert keys[: len(REQUIRED)] == REQUIRED
    extra = keys[len(REQUIRED) :]
    assert extra == [key for key in OPTIONAL if key in extra], keys
    assert all(hit[key] is not None for key in keys if key not in NULLABLE)


def _key(hit: dict) -> tuple:
    return hit["path"], hit["heading"], hit["content"]


def _span_texts(hit: dict) -> list[str]:
    raw = hit["content"].encode("utf-8")
    return [raw[s["start"] : s["end"]].decode("utf-8") for s in hit["match_spans"]]


def test_mmr_keeps_rrf_scores_in_selection_order(npm_kb):
    # MMR at limit 5 and plain search at limit 10 both fetch P = 50 per leg (R6.20): same RRF scores.
    picked = _search(npm_kb, QUERY, "--mmr", "true", "--mmr-lambda", "0.5", "--limit", "5")
    plain = _search(npm_kb, QUERY, "--mmr", "false", "--limit", "10")
    assert len(picked) == 5
    assert _key(picked[0]) == _key(plain[0]) and picked[0]["score"] == plain[0]["score"]  # first pick: best
    rrf = {_key(hit): hit["score"] for hit in plain}
    for hit in picked:
        assert "expanded_from" not in hit  # the parent retriever is off
        if _key(hit) in rrf:
            assert hit["score"] == rrf[_key(hit)]  # the RRF value, not the MMR objective
        else:
            assert hit["score"] <= plain[-1]["score"]
    assert len({_key(hit) for hit in picked}) == 5


def test_mmr_lambda_one_is_plain_relevance_order_and_warns(npm_kb, monkeypatch):
    monkeypatch.setattr(mmr, "LAMBDA_ONE_ONCE", OncePerProcess())
    result = npm_kb.run("search", QUERY, "--mmr", "true", "--mmr-lambda", "1.0")
    assert result.exit_code == 0, result.output
    assert "mmr_lambda = 1.0" in result.stderr
    plain = _search(npm_kb, QUERY, "--mmr", "false")
    assert json.loads(result.stdout)["results"] == plain
    again = npm_kb.run("search", QUERY, "--mmr", "true", "--mmr-lambda", "1.0")
    assert "mmr_lambda = 1.0" not in again.stderr  # once per process


def test_same_doc_penalty_spreads_results_over_documents(npm_kb):
    # λ = 1 with penalty 1: each step takes the best-scored chunk of a document not yet chosen.
    picked = _search(npm_kb, QUERY, "--mmr", "true", "--mmr-lambda", "1.0", "--mmr-same-doc-penalty", "1.0")
    plain = _search(npm_kb, QUERY, "--mmr", "false", "--limit", "10")
    first_per_doc = list(dict.fromkeys(hit["path"] for hit in plain))
    shared = min(len(first_per_doc), len(picked))
    assert [hit["path"] for hit in picked][:shared] == first_per_doc[:shared]
    assert len({hit["path"] for hit in picked}) == len(picked)


def test_parent_retriever_widens_content_and_nothing_else(npm_kb):
    plain = _search(npm_kb, QUERY, "--parent-retriever", "false")
    wide = _search(npm_kb, QUERY, "--parent-retriever", "true")
    assert [(h["path"], h["heading"], h["title"], h["score"]) for h in wide] == [
        (h["path"], h["heading"], h["title"], h["score"]) for h in plain
    ]
    kinds = set()
    for before, after in zip(plain, wide, strict=True):
        assert "expanded_from" not in before
        info = after["expanded_from"]
        kinds.add(info["kind"])
        assert before["content"] in after["content"]
        if info["kind"] == "whole_document":
            assert list(info) == ["kind", "total_chunks"] and info["total_chunks"] >= 1
            assert after["content"].count("\n\n") >= info["total_chunks"] - 1
        else:
            assert list(info) == ["kind", "from_index", "to_index"]
            assert 0 <= info["from_index"] <= info["to_index"] <= info["from_index"] + 2
            if info["from_index"] == info["to_index"]:
                assert after["content"] == before["content"]  # considered, not expanded
            else:
                assert len(after["content"]) > len(before["content"])
    assert kinds  # at least one hit was considered


def test_match_spans_point_at_the_query_terms_in_the_final_content(npm_kb):
    terms = [t.lower() for t in compile_query(QUERY).positive]
    hits = _search(npm_kb, QUERY, "--parent-retriever", "true", "--mmr", "true", "--mmr-lambda", "0.5")
    assert any(hit["match_spans"] for hit in hits)
    for hit in hits:
        raw = hit["content"].encode("utf-8")
        spans = [(s["start"], s["end"]) for s in hit["match_spans"]]
        assert spans == sorted(spans) and len(spans) <= 100
        assert all(0 <= s < e <= len(raw) for s, e in spans)
        assert all(e1 <= s2 for (_, e1), (s2, _) in itertools.pairwise(spans))
        for text in _span_texts(hit):
            assert any(text.lower().startswith(t) for t in terms) and any(
                text.lower().endswith(t) for t in terms
            )


def test_a_quoted_phrase_is_one_term(npm_kb):
    hits = _search(npm_kb, '"npm install"', "--limit", "10")
    texts = [text for hit in hits for text in _span_texts(hit)]
    assert texts and {text.lower() for text in texts} == {"npm install"}


def test_a_non_ascii_term_gets_match_spans_too(npm_kb):
    # Departs from R6.49 (docs/retrieval.md): non-ASCII terms are matched, on character boundaries.
    hits = _search(npm_kb, "npm パッケージ", "--parent-retriever", "true")
    assert hits and all("expanded_from" in hit for hit in hits)
    for hit in hits:
        raw = hit["content"].encode("utf-8")
        assert all(
            raw[s["start"] : s["end"]].decode("utf-8").lower() in ("npm", "パッケージ")
            for s in hit["match_spans"]
        )


def test_text_format_shows_the_first_three_spans(npm_kb):
    (hit,) = _search(npm_kb, QUERY, "--limit", "1")
    assert hit["match_spans"]
    shown = ", ".join(f'"{text}"' for text in _span_texts(hit)[:3])
    result = npm_kb.run("search", QUERY, "--limit", "1", "--format", "text")
    assert result.exit_code == 0, result.output
    assert f"matches: {shown}" in result.stdout.splitlines()
