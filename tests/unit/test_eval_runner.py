"""The eval runner and its reports (SPEC R10.4, R10.9, R10.11, R10.12, R10.14) with a fake search."""

from __future__ import annotations

import datetime as dt
import json
import math
from pathlib import Path

import attrs
import pytest

from grooveseek.errors import SearchError
from grooveseek.eval import (
    EvalError,
    GoldenExpected,
    GoldenQuery,
    GoldenSet,
    effective_limit,
    normalize_k_values,
    parse_golden,
    render_json,
    render_text,
    run_eval,
)
from grooveseek.types import Hit

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "golden"
CLOCK = dt.datetime(2025, 3, 4, 5, 6, 7, 890, tzinfo=dt.UTC)
FINGERPRINT = {"model": "fake-model", "reranker": None, "limit": 10, "k_values": [1, 5, 10]}
CORPUS = {"documents": 3, "chunks": 7, "digest": "ab" * 32}
# nDCG of two expected entries found at ranks 1 and 3 (both within k).
NDCG_1_3 = (1 + 1 / math.log2(4)) / (1 + 1 / math.log2(3))


def hit(path: str, heading: str | None = None, score: float = 0.5) -> Hit:
    return Hit(
        chunk_id=1,
        score=score,
        path=path,
        title=None,
        heading=heading,
        topic=None,
        date=None,
        tags=(),
        content="text",
    )


class FakeSearch:
    """Returns canned hits per query text and records every (query, limit) call."""

    def __init__(self, results: dict[str, list[Hit]]) -> None:
        self.results = results
        self.calls: list[tuple[str, int]] = []

    def __call__(self, query: str, limit: int) -> list[Hit]:
        self.calls.append((query, limit))
        return self.results.get(query, [])


def golden_of(*queries: GoldenQuery) -> GoldenSet:
    return GoldenSet(path="/kb/.groove-eval.yml", queries=queries, sha256="0" * 64)


# Three queries: a perfect hit, two entries found at ranks 1 and 3, and a miss.
GOLDEN = golden_of(
    GoldenQuery("perfect", "find a", (GoldenExpected("a.md", "Intro"),)),
    GoldenQuery("split", "find b and c", (GoldenExpected("b.md"), GoldenExpected("c.md", "Usage"))),
    GoldenQuery("miss", "find d", (GoldenExpected("d.md"), GoldenExpected("e.md"))),
)
SEARCH_RESULTS = {
    "find a": [hit("a.md", "intro", 0.9), hit("x.md", None, 0.1)],
    "find b and c": [hit("b.md", "Any", 0.8), hit("x.md", "Usage", 0.7), hit("c.md", " usage ", 0.6)],
    "find d": [hit("x.md", None, 0.3)],
}


def run(**overrides):
    kwargs = dict(k_values=(1, 5, 10), limit=10, fingerprint=FINGERPRINT, corpus=CORPUS, clock=lambda: CLOCK)
    kwargs.update(overrides)
    search = FakeSearch(SEARCH_RESULTS)
    return run_eval(GOLDEN, search, **kwargs), search


# --- running --------------------------------------------------------------------------------------


def test_each_query_runs_once_with_the_effective_limit():
    result, search = run(limit=3)
    assert search.calls == [("find a", 10), ("find b and c", 10), ("find d", 10)]
    assert result.limit == 10
    _, search = run(limit=20)
    assert {limit for _, limit in search.calls} == {20}


def test_effective_limit_and_k_normalisation():
    assert effective_limit((1, 5, 10), None) == 10
    assert effective_limit((1, 5, 10), 3) == 10
    assert effective_limit((1, 5, 10), 25) == 25
    assert normalize_k_values([10, 1, 5, 5]) == (1, 5, 10)
    result, _ = run(k_values=[10, 1, 5, 1])
    assert result.k_values == (1, 5, 10)


def test_k_and_limit_are_clamped_to_what_a_search_returns():
    # R6.4: no search returns more than 1000 hits, so neither may the recorded k or limit claim more.
    assert effective_limit((1, 5, 10), 1500) == 1000
    assert effective_limit((1, 10**23), None) == 1000
    assert normalize_k_values([5, 10**23, 2000]) == (5, 1000)
    result, search = run(k_values=(1, 10**23), limit=1500)
    assert result.k_values == (1, 1000) and result.limit == 1000
    assert {limit for _, limit in search.calls} == {1000}


@pytest.mark.parametrize("k_values", [(), (0,), (1, -5), (True,), (2.5,)])
def test_invalid_k_values_are_refused(k_values):
    with pytest.raises(EvalError):
        run(k_values=k_values)


def test_per_query_metrics_are_hand_checked():
    result, _ = run()
    perfect, split, miss = result.per_query
    assert perfect.metrics.recall_at_k == {1: 1.0, 5: 1.0, 10: 1.0}
    assert perfect.metrics.reciprocal_rank == 1.0
    assert perfect.metrics.ndcg_at_k == {1: 1.0, 5: 1.0, 10: 1.0}

    # b.md at rank 1 (path-only entry), c.md "Usage" at rank 3 (x.md "Usage" at 2 is the wrong file).
    assert split.metrics.recall_at_k == {1: 0.5, 5: 1.0, 10: 1.0}
    assert split.metrics.reciprocal_rank == 1.0
    assert split.metrics.ndcg_at_k[1] == pytest.approx(1.0)  # one ideal slot, filled at rank 1
    assert split.metrics.ndcg_at_k[5] == pytest.approx(NDCG_1_3)
    assert split.metrics.ndcg_at_k[10] == pytest.approx(NDCG_1_3)

    assert miss.metrics.recall_at_k == {1: 0.0, 5: 0.0, 10: 0.0}
    assert miss.metrics.reciprocal_rank == 0.0
    assert miss.metrics.ndcg_at_k == {1: 0.0, 5: 0.0, 10: 0.0}


def test_aggregate_is_the_mean_over_queries():
    result, _ = run()
    agg = result.aggregate
    assert agg.query_count == 3
    assert agg.recall_at_k[1] == pytest.approx(1.5 / 3)
    assert agg.recall_at_k[5] == pytest.approx(2 / 3)
    assert agg.mrr == pytest.approx(2 / 3)
    assert agg.ndcg_at_k[10] == pytest.approx((1 + NDCG_1_3) / 3)


def test_top_k_records_rank_path_heading_and_score():
    result, _ = run()
    top = result.per_query[1].top_k
    assert [(h.rank, h.path, h.heading, h.score) for h in top] == [
        (1, "b.md", "Any", 0.8),
        (2, "x.md", "Usage", 0.7),
        (3, "c.md", " usage ", 0.6),
    ]
    assert [h.heading for h in result.per_query[0].top_k] == ["intro", None]


def test_a_search_returning_more_than_the_limit_is_truncated():
    golden = golden_of(GoldenQuery("q", "q", (GoldenExpected("z.md"),)))
    many = [hit(f"{i}.md") for i in range(5)] + [hit("z.md")]
    result = run_eval(golden, FakeSearch({"q": many}), k_values=(3,), limit=None, fingerprint={}, corpus={})
    assert len(result.per_query[0].top_k) == 3
    assert result.per_query[0].metrics.reciprocal_rank == 0.0  # z.md at rank 6 was never "returned"


def test_metrics_beyond_max_k_still_count_for_reciprocal_rank():
    golden = golden_of(GoldenQuery("q", "q", (GoldenExpected("z.md"),)))
    hits = [hit(f"{i}.md") for i in range(5)] + [hit("z.md")]
    result = run_eval(golden, FakeSearch({"q": hits}), k_values=(1, 5), limit=10, fingerprint={}, corpus={})
    metrics = result.per_query[0].metrics
    assert metrics.recall_at_k == {1: 0.0, 5: 0.0}
    assert metrics.reciprocal_rank == pytest.approx(1 / 6)


def test_search_error_names_the_query_id():
    def failing(query: str, limit: int):
        raise SearchError("query is too long")

    with pytest.raises(EvalError) as info:
        run_eval(GOLDEN, failing, k_values=(1,), limit=None, fingerprint={}, corpus={})
    assert info.value.message == 'golden query "perfect" failed'
    assert info.value.causes == ("query is too long",)


def test_timestamp_is_utc_rfc3339_with_z():
    result, _ = run()
    assert result.timestamp == "2025-03-04T05:06:07Z"
    plus_nine = dt.timezone(dt.timedelta(hours=9))
    result, _ = run(clock=lambda: dt.datetime(2025, 3, 4, 9, 0, 0, tzinfo=plus_nine))
    assert result.timestamp == "2025-03-04T00:00:00Z"
    real = run_eval(GOLDEN, FakeSearch({}), k_values=(1,), limit=None, fingerprint={}, corpus={})
    parsed = dt.datetime.strptime(real.timestamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.UTC)
    assert abs(dt.datetime.now(dt.UTC) - parsed) < dt.timedelta(minutes=5)


def test_real_golden_file_with_an_oracle_search_scores_perfectly():
    golden = parse_golden((FIXTURES / "npm-docs.yml").read_bytes(), "npm-docs.yml")
    oracle = {q.query: [hit(e.path, e.heading or "Whatever") for e in q.expected] for q in golden.queries}
    result = run_eval(golden, FakeSearch(oracle), k_values=(1, 5, 10), limit=None, fingerprint={}, corpus={})
    assert result.aggregate.query_count == 30
    assert result.aggregate.recall_at_k[10] == 1.0
    assert result.aggregate.mrr == 1.0
    assert result.aggregate.ndcg_at_k[10] == pytest.approx(1.0)
    assert "(regressions and misses, 0 of 30)" in render_text(result, model="m", reranker=None, color=False)


# --- JSON shape -----------------------------------------------------------------------------------


def test_as_dict_has_the_r10_12_shape_with_string_k_keys():
    result, _ = run()
    data = result.as_dict()
    assert list(data) == [
        "timestamp",
        "fingerprint",
        "aggregate",
        "per_query",
        "previous",
        "diff",
        "corpus",
        "corpus_changed",
        "findings",
    ]
    assert data["timestamp"] == "2025-03-04T05:06:07Z"
    assert data["fingerprint"] == FINGERPRINT
    assert data["corpus"] == CORPUS
    comparison = (data["previous"], data["diff"], data["corpus_changed"], data["findings"])
    assert comparison == (None, None, None, [])
    assert list(data["aggregate"]) == ["recall_at_k", "mrr", "ndcg_at_k", "query_count"]
    assert list(data["aggregate"]["recall_at_k"]) == ["1", "5", "10"]
    split = data["per_query"][1]
    assert split == {
        "id": "split",
        "query": "find b and c",
        "expected": [{"path": "b.md"}, {"path": "c.md", "heading": "Usage"}],
        "top_k": [
            {"rank": 1, "path": "b.md", "heading": "Any", "score": 0.8},
            {"rank": 2, "path": "x.md", "heading": "Usage", "score": 0.7},
            {"rank": 3, "path": "c.md", "heading": " usage ", "score": 0.6},
        ],
        "metrics": {
            "recall_at_k": {"1": 0.5, "5": 1.0, "10": 1.0},
            "reciprocal_rank": 1.0,
            "ndcg_at_k": {"1": 1.0, "5": pytest.approx(NDCG_1_3), "10": pytest.approx(NDCG_1_3)},
        },
    }


def test_history_record_is_the_r10_14_run_without_comparison_fields():
    result, _ = run()
    record = result.history_record()
    assert list(record) == ["timestamp", "fingerprint", "corpus", "per_query", "aggregate"]
    assert record["per_query"] == result.as_dict()["per_query"]


def test_comparison_fields_can_be_filled_later():
    result, _ = run()
    filled = attrs.evolve(
        result, previous={"timestamp": "x"}, corpus_changed=True, findings=({"check": "c"},)
    )
    data = filled.as_dict()
    assert data["previous"] == {"timestamp": "x"}
    assert data["corpus_changed"] is True
    assert data["findings"] == [{"check": "c"}]


def test_render_json_round_trips_with_two_space_indent_and_raw_unicode():
    golden = golden_of(GoldenQuery("梅雨", "梅雨とは何季の一種か?", (GoldenExpected("a10336.md", "段落 1"),)))
    result = run_eval(golden, FakeSearch({}), k_values=(1,), limit=None, fingerprint={}, corpus={})
    text = render_json(result)
    assert json.loads(text) == result.as_dict()
    assert "梅雨とは何季の一種か?" in text and "\\u" not in text
    assert '\n  "fingerprint": {}' in text
    assert not text.endswith("\n")


# --- text report ----------------------------------------------------------------------------------


def test_render_text_full_report():
    result, _ = run()
    text = render_text(result, model="fastembed:minilm-l6-int8", reranker=None, color=False)
    assert text == "\n".join(
        [
            "groove eval - 2025-03-04T05:06:07Z",
            "  model: fastembed:minilm-l6-int8    reranker: none    limit: 10    queries: 3",
            "  mmr: off    parent retriever: off",
            "",
            "Aggregate",
            "  recall@1   0.500",
            "  recall@5   0.667",
            "  recall@10  0.667",
            "  MRR        0.667",
            "  nDCG@10    0.640",  # (1 + 0.9197) / 3
            "",
            "Per-query (regressions and misses, 1 of 3)",
            "  ✗ miss  recall@10: 0.00    expected d.md, e.md missing",
        ]
    )
    assert "\x1b" not in text
    assert "↑" not in text and "↓" not in text  # nothing to compare against yet


def test_render_text_names_the_reranker_and_colours_the_miss_marker():
    result, _ = run()
    text = render_text(result, model="m", reranker="bge-reranker", color=True)
    assert "    reranker: bge-reranker    " in text
    assert "\x1b[31m✗\x1b[0m miss" in text


def test_render_text_shows_the_stages_the_fingerprint_records():
    fingerprint = dict(
        FINGERPRINT,
        mmr={"lambda": 0.5, "same_doc_penalty": 0.25},
        parent_retriever={"whole_doc_threshold_tokens": 100, "max_expanded_tokens": 2000},
        legs="fts",
    )
    result, _ = run(fingerprint=fingerprint)
    lines = render_text(result, model="m", reranker="bge-base", color=False).splitlines()
    assert lines[1].startswith("  model: m    reranker: bge-base    limit: 10")
    assert lines[2] == (
        "  mmr: lambda 0.5, same-doc penalty 0.25    "
        "parent retriever: whole document up to 100 tokens, at most 2000 tokens    legs: fts"
    )


def test_render_text_names_a_file_pinned_to_two_headings_once():
    golden = golden_of(GoldenQuery("q", "q", (GoldenExpected("a.md", "One"), GoldenExpected("a.md", "Two"))))
    result = run_eval(
        golden,
        FakeSearch({"q": [hit("a.md", "Three")]}),
        k_values=(5,),
        limit=None,
        fingerprint={},
        corpus={},
    )
    text = render_text(result, model="m", reranker=None, color=False)
    assert text.endswith("  ✗ q  recall@5: 0.00    expected a.md missing")
