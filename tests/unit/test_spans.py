"""``match_spans`` (SPEC R6.48–R6.51): the R6.50 contract as hypothesis properties, plus pinned examples."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from grooveseek.search.query import compile_query
from grooveseek.search.spans import MAX_CONTENT_BYTES, _merge, match_spans, span_terms

# A small alphabet so terms actually occur, mixed with multi-byte characters (2, 3 and 4 UTF-8
# bytes) so byte offsets and character offsets diverge.
CONTENT = st.text(alphabet="abcABC -é、日🎉", max_size=120)
TERM = st.text(alphabet="abcAB-", min_size=1, max_size=4)
TERMS = st.lists(TERM, min_size=1, max_size=12)


def _oracle_first(content: str, term: str) -> tuple[int, int] | None:
    """Where ``term`` first occurs, ASCII case-insensitively, in byte offsets (independent of spans.py)."""
    raw = content.encode("utf-8")
    low = bytes(b + 32 if 65 <= b <= 90 else b for b in raw)
    needle = bytes(b + 32 if 65 <= b <= 90 else b for b in term.encode("ascii"))
    at = low.find(needle)
    return None if at < 0 else (at, at + len(needle))


@settings(max_examples=300, deadline=None)
@given(CONTENT, TERMS)
def test_spans_are_sorted_disjoint_non_empty_and_bounded(content, terms):
    spans = match_spans(content, terms)
    assert spans is not None
    raw = content.encode("utf-8")
    assert len(spans) <= 100
    for start, end in spans:
        assert 0 <= start < end <= len(raw)
    for (_, end), (start, _) in itertools.pairwise(spans):
        assert end <= start  # disjoint and sorted; touching (end == start) is allowed


@settings(max_examples=300, deadline=None)
@given(CONTENT, TERMS)
def test_offsets_fall_on_character_boundaries_and_frame_terms(content, terms):
    raw = content.encode("utf-8")
    lowered = {t.lower() for t in terms}
    for start, end in match_spans(content, terms):
        text = raw[start:end].decode("utf-8")  # raises if a boundary splits a character
        raw[:start].decode("utf-8")
        # A merged span starts with one occurrence and ends with another.
        assert any(text.lower().startswith(t) for t in lowered)
        assert any(text.lower().endswith(t) for t in lowered)


@settings(max_examples=300, deadline=None)
@given(CONTENT, TERMS, st.randoms(use_true_random=False))
def test_independent_of_term_order_and_duplicates(content, terms, rnd):
    shuffled = list(terms) + list(terms[:2])
    rnd.shuffle(shuffled)
    assert match_spans(content, shuffled) == match_spans(content, terms)


@settings(max_examples=300, deadline=None)
@given(CONTENT, TERMS)
def test_idempotent(content, terms):
    first = match_spans(content, terms)
    assert match_spans(content, terms) == first
    assert _merge(first) == first  # the output is a fixed point of the merge rule


@settings(max_examples=300, deadline=None)
@given(CONTENT, TERMS)
def test_every_occurring_term_is_covered(content, terms):
    spans = match_spans(content, terms)
    for term in terms:
        first = _oracle_first(content, term)
        if first is not None:
            assert any(s <= first[0] and first[1] <= e for s, e in spans), (term, spans)


ALL_TRIGRAMS = [a + b + c for a in "abcdefghij" for b in "abcdefghij" for c in "abcdefghij"]


@settings(max_examples=50, deadline=None)
@given(st.integers(101, 300), st.randoms(use_true_random=False))
def test_more_than_100_terms_keeps_the_first_100_sorted(count, rnd):
    terms = rnd.sample(ALL_TRIGRAMS, count)
    content = " ".join(rnd.sample(terms, count))
    spans = match_spans(content, terms)
    assert len(spans) == 100
    raw = content.encode("utf-8")
    assert sorted(raw[s:e].decode() for s, e in spans) == sorted(terms)[:100]


def test_absent_when_there_is_nothing_to_look_for():
    assert match_spans("some content", []) is None
    assert match_spans("some content", [""]) is None


def test_non_ascii_terms_get_utf8_byte_spans():
    # Departs from R6.49 (docs/retrieval.md): Japanese queries get spans too, on character boundaries.
    content = "café and rust"
    spans = match_spans(content, ["café", "rust"])
    assert [content.encode()[s:e].decode() for s, e in spans] == ["café", "rust"]
    assert match_spans("日本語 rust", ["日本語"]) == ((0, 9),)


def test_span_terms_drop_stopwords_short_latin_words_and_particles():
    assert span_terms(["How", "do", "I", "keep", "the", "index", "fresh", "while", "JS"]) == [
        "keep",
        "index",
        "fresh",
    ]
    assert span_terms(["配列の長さを取得する方法"]) == ["配列", "取得", "方法"]
    # The long-vowel mark belongs to the katakana word; in a hiragana word it is dropped with it.
    assert span_terms(["配列のコピーをする"]) == ["配列", "コピー"]
    assert span_terms(["データはすごーい"]) == ["データ"]
    assert span_terms(["the end"], phrases=True) == ["the end"]  # a quoted phrase is kept as written


def test_pipeline_spans_skip_stopwords():
    content = "the index stays fresh while you edit the notes"
    spans = match_spans(
        content, span_terms(["how", "do", "I", "keep", "the", "index", "fresh", "while", "I", "edit"])
    )
    assert [content.encode()[s:e].decode() for s, e in spans] == ["index", "fresh", "edit"]


def test_non_ascii_content_with_ascii_terms_uses_byte_offsets():
    assert compile_query("rust、tokio").positive == ("rust", "tokio")  # the separator is not a term
    content = "rust、tokio"
    spans = match_spans(content, ["rust", "tokio"])
    assert spans == ((0, 4), (7, 12))  # "、" is three bytes
    assert [content.encode()[s:e].decode() for s, e in spans] == ["rust", "tokio"]


def test_lowercasing_is_ascii_only_so_offsets_do_not_shift():
    # str.lower() would turn "İ" (2 bytes) into "i̇" (3 bytes) and move every later offset.
    assert match_spans("İRUST", ["rust"]) == ((2, 6),)
    assert match_spans("RuSt", ["rUsT"]) == ((0, 4),)


def test_content_limit_is_256_kib():
    at_limit = "x" * (MAX_CONTENT_BYTES - 4) + "rust"
    assert match_spans(at_limit, ["rust"]) == ((MAX_CONTENT_BYTES - 4, MAX_CONTENT_BYTES),)
    assert match_spans(at_limit + "x", ["rust"]) is None
    # The limit is in bytes, not characters: 65,537 four-byte characters exceed it.
    assert match_spans("🎉" * 65_537, ["rust"]) is None
    assert match_spans("🎉" * 65_536, ["rust"]) == ()


def test_touching_spans_stay_separate_overlapping_spans_merge():
    assert match_spans("abcdef", ["abc", "def"]) == ((0, 3), (3, 6))
    assert match_spans("abcdef", ["abcd", "cdef"]) == ((0, 6),)
    assert match_spans("abcdef", ["abcdef", "bcd"]) == ((0, 6),)  # containment merges too


def test_occurrences_are_non_overlapping_left_to_right():
    assert match_spans("aaaa", ["aa"]) == ((0, 2), (2, 4))
    assert match_spans("aaa", ["aa"]) == ((0, 2),)


def test_no_match_is_an_empty_tuple_not_none():
    assert match_spans("nothing here", ["rust"]) == ()


def test_per_term_quota_is_floor_100_over_k():
    content = "a " * 150 + "b " * 150
    one = match_spans(content, ["a"])
    assert len(one) == 100  # k = 1: quota 100
    two = match_spans(content, ["a", "b"])
    raw = content.encode()
    texts = [raw[s:e].decode() for s, e in two]
    assert texts.count("a") == 50 and texts.count("b") == 50  # k = 2: quota 50 each, no redistribution
    three = match_spans(content, ["a", "b", "zz"])
    assert len(three) == 66  # k = 3: quota 33; the absent term's share is not handed on
