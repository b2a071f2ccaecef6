"""Eval metrics (SPEC R10.5–R10.8): matching rules and hand-computed recall / RR / nDCG."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grooveseek.eval import (
    GoldenExpected,
    first_match_ranks,
    matches,
    ndcg_at_k,
    recall_at_k,
    reciprocal_rank,
)

E = GoldenExpected


# --- matching (R10.5) -----------------------------------------------------------------------------


def test_path_only_entry_matches_any_chunk_of_the_file():
    assert matches("docs/a.md", "Anything", E("docs/a.md"))
    assert matches("docs/a.md", None, E("docs/a.md"))


def test_paths_must_be_equal():
    assert not matches("docs/b.md", "H", E("docs/a.md"))
    assert not matches("docs/A.md", None, E("docs/a.md"))  # paths are not case-folded
    assert not matches("./docs/a.md", None, E("docs/a.md"))


def test_heading_is_compared_trimmed_and_lowercased_on_both_sides():
    assert matches("a.md", "  Data Flow\t", E("a.md", "data flow "))
    assert matches("a.md", "ÄPFEL", E("a.md", "äpfel"))
    assert matches("a.md", "真偽値を取得 {#get-boolean}", E("a.md", "真偽値を取得 {#get-boolean}"))


def test_heading_inner_whitespace_and_text_must_still_agree():
    assert not matches("a.md", "Data  flow", E("a.md", "Data flow"))
    assert not matches("a.md", "Data flow (2)", E("a.md", "Data flow"))


def test_hit_without_heading_never_matches_a_heading_pinned_entry():
    assert not matches("a.md", None, E("a.md", "Data flow"))
    # Not even an empty pinned heading: "no heading" is not the empty heading.
    assert not matches("a.md", None, E("a.md", ""))


def test_first_match_ranks_one_per_entry_and_first_hit_wins():
    hits = [("b.md", "X"), ("a.md", "Intro"), ("a.md", "Usage"), ("a.md", "Intro")]
    expected = [E("a.md", "intro"), E("a.md", "usage"), E("c.md"), E("a.md")]
    assert first_match_ranks(hits, expected) == (2, 3, None, 2)


# --- hand-computed metrics (R10.6–R10.8) ----------------------------------------------------------


def test_recall_counts_entries_matched_within_k():
    ranks = (1, 3, None)
    assert recall_at_k(ranks, 1) == pytest.approx(1 / 3)
    assert recall_at_k(ranks, 2) == pytest.approx(1 / 3)
    assert recall_at_k(ranks, 3) == pytest.approx(2 / 3)
    assert recall_at_k(ranks, 10) == pytest.approx(2 / 3)


def test_recall_is_zero_without_results_or_entries():
    assert first_match_ranks([], [E("a.md")]) == (None,)
    assert recall_at_k((None,), 10) == 0.0
    assert recall_at_k((), 10) == 0.0


def test_reciprocal_rank_uses_the_first_hit_matching_any_entry():
    assert reciprocal_rank((None, 3, 4)) == pytest.approx(1 / 3)
    assert reciprocal_rank((5, 2)) == pytest.approx(1 / 2)
    assert reciprocal_rank((1,)) == 1.0
    assert reciprocal_rank((None, None)) == 0.0
    assert reciprocal_rank(()) == 0.0


def test_ndcg_two_entries_at_ranks_1_and_3():
    expected = (1 + 1 / math.log2(4)) / (1 + 1 / math.log2(3))
    assert ndcg_at_k((1, 3), 10) == pytest.approx(expected)
    # At k=2 the rank-3 entry no longer counts; IDCG still has two slots.
    assert ndcg_at_k((1, 3), 2) == pytest.approx(1 / (1 + 1 / math.log2(3)))


def test_ndcg_single_entry_at_rank_2():
    assert ndcg_at_k((2,), 10) == pytest.approx(1 / math.log2(3))
    assert ndcg_at_k((2,), 1) == 0.0


def test_ndcg_idcg_uses_min_of_expected_and_k():
    # Three entries but k=1: one ideal slot, so one match at rank 1 is perfect.
    assert ndcg_at_k((1, None, None), 1) == 1.0
    # k=2: two ideal slots; ranks 1 and 2 fill them perfectly even though a third entry is missed.
    assert ndcg_at_k((1, 2, None), 2) == pytest.approx(1.0)
    assert ndcg_at_k((1, 2, None), 10) == pytest.approx(
        (1 + 1 / math.log2(3)) / (1 + 1 / math.log2(3) + 1 / math.log2(4))
    )


def test_ndcg_is_zero_with_no_match_or_no_entries():
    assert ndcg_at_k((None, None), 10) == 0.0
    assert ndcg_at_k((), 10) == 0.0


def test_ndcg_is_capped_at_one_when_one_hit_is_the_first_match_of_two_entries():
    # A path-only entry and a heading-pinned one of the same file, both matched by hit 1:
    # raw DCG/IDCG would be 2 / (1 + 1/log2 3) > 1, but R10.8 bounds every metric by 1.
    ranks = first_match_ranks([("a.md", "Intro")], [E("a.md"), E("a.md", "Intro")])
    assert ranks == (1, 1)
    assert ndcg_at_k(ranks, 10) == 1.0
    assert recall_at_k(ranks, 10) == 1.0


# --- properties -----------------------------------------------------------------------------------

PATHS = st.sampled_from(["a.md", "b.md", "c.md"])
HEADINGS = st.one_of(st.none(), st.sampled_from(["Intro", " intro ", "INTRO", "Usage", ""]))
HITS = st.lists(st.tuples(PATHS, HEADINGS), max_size=12)
EXPECTED = st.lists(st.builds(GoldenExpected, PATHS, HEADINGS), min_size=1, max_size=5)
K = st.integers(min_value=1, max_value=15)


@given(hits=HITS, expected=EXPECTED, k=K)
def test_every_metric_lies_in_unit_interval(hits, expected, k):
    ranks = first_match_ranks(hits, expected)
    for value in (recall_at_k(ranks, k), reciprocal_rank(ranks), ndcg_at_k(ranks, k)):
        assert 0.0 <= value <= 1.0


@given(hits=HITS, expected=EXPECTED, k=K)
def test_recall_never_drops_as_k_grows_and_agrees_with_ndcg_on_zero(hits, expected, k):
    ranks = first_match_ranks(hits, expected)
    assert recall_at_k(ranks, k) <= recall_at_k(ranks, k + 1)
    # nDCG@k is positive exactly when something was found within k.
    assert (ndcg_at_k(ranks, k) > 0) == (recall_at_k(ranks, k) > 0)


@given(hits=HITS, expected=EXPECTED)
def test_ranks_point_at_matching_hits_and_nothing_earlier_matches(hits, expected):
    for entry, rank in zip(expected, first_match_ranks(hits, expected), strict=True):
        earlier = hits if rank is None else hits[: rank - 1]
        assert not any(matches(p, h, entry) for p, h in earlier)
        if rank is not None:
            assert matches(*hits[rank - 1], entry)


@given(ranks=st.lists(st.one_of(st.none(), st.integers(1, 50)), max_size=8), k=K)
def test_metrics_on_arbitrary_ranks_stay_bounded(ranks, k):
    for value in (recall_at_k(ranks, k), reciprocal_rank(ranks), ndcg_at_k(ranks, k)):
        assert 0.0 <= value <= 1.0
