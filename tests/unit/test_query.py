"""FTS5 query compilation: the pinned compilations of SPEC R6.15 and the bounds around them."""

from __future__ import annotations

import pytest

from grooveseek.errors import SearchError
from grooveseek.search.query import compile_query, is_exclusion, split_groups


@pytest.mark.parametrize(
    ("query", "expression"),
    [
        ("再ランキングの評価について", '"再ランキング" OR "ランキング" OR "の評価" OR "について"'),
        ('"Foundry Local" の設定', '"Foundry Local" OR "の設定"'),
        ("システム化", '"システム化" OR "システム"'),
        ("AI について", '"について"'),
        ("ML pipelines", '"pipelines"'),
        ("AI", None),
        ("rust -async", '("rust") NOT ("async")'),
        ("sqlite-vec E0382", '"sqlite-vec" OR "E0382"'),
        ("heading:foo", '"heading" OR "foo"'),
    ],
)
def test_pinned_compilations(query, expression):
    assert compile_query(query).expression == expression


def test_whole_query_fallback_when_no_phrase():
    # Every run is under the floor, but the trimmed query is >= 3 characters (R6.14).
    assert compile_query("ab").expression is None
    assert compile_query("a b").expression == '"a b"'
    assert compile_query("ab c").expression == '"ab c"'


def test_quoted_phrase_with_doubled_quote_and_unterminated_quote():
    assert compile_query('"say ""hi"" now"').positive == ('say "hi" now',)
    assert compile_query('"unterminated rust').positive == ("unterminated", "rust")


@pytest.mark.parametrize(
    ("group", "excl"), [("-async", True), ("-", False), ("---", False), ("--x", False), ("-x", True)]
)
def test_exclusion_groups(group, excl):
    assert is_exclusion(group) is excl


def test_quoted_leading_hyphen_is_a_search_term():
    compiled = compile_query('"-foo" bar')
    assert compiled.negative == () and "-foo" in compiled.positive


def test_whitespace_inside_quotes_does_not_split_groups():
    assert split_groups('a "b c" -"d e"') == ["a", '"b c"', '-"d e"']
    compiled = compile_query('rust -"exact phrase"')
    assert compiled.negative == ("exact phrase",)
    assert compiled.positive_text == "rust"


def test_exclusion_only_query_is_refused():
    with pytest.raises(SearchError, match="nothing to search for"):
        compile_query("-async -tokio")


def test_short_negative_excludes_nothing():
    compiled = compile_query("rust -ab")
    assert compiled.negative == () and compiled.expression == '"rust"'


def test_query_size_limit():
    compile_query("x" * 1024)
    with pytest.raises(SearchError, match=r"query is too large: 1025 bytes \(max 1024 bytes\)"):
        compile_query("x" * 1025)
    with pytest.raises(SearchError):
        compile_query("あ" * 342)  # 1026 UTF-8 bytes


def test_phrase_cap_warns_and_truncates():
    words = [f"word{i:03d}" for i in range(40)]
    compiled = compile_query(" ".join(words))
    assert len(compiled.positive) == 32
    assert compiled.positive == tuple(words[:32])
    assert compiled.warnings == ("fts_query: query exceeded the phrase cap (32); 8 phrase(s) dropped",)


def test_duplicates_are_removed_keeping_the_first():
    assert compile_query("rust tokio rust").positive == ("rust", "tokio")


def test_every_phrase_is_a_substring_of_the_query():
    for query in ["再ランキングの評価について", "配列のコピー方法", "東京都の天気予報AIモデル", "システム化"]:
        for phrase in compile_query(query).positive:
            assert phrase in query


# -- properties ------------------------------------------------------------------------------------
import apsw  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from grooveseek.search.query import PHRASE_CAP, TRIGRAM_FLOOR  # noqa: E402

QUERY_CHARS = st.sampled_from(
    list("ab xyz-_\"'*():^東京都の天気をコピー方法ランキング。、!?\t0123") + ["\x00"]
)
queries = st.text(alphabet=QUERY_CHARS, max_size=60)

_FTS = apsw.Connection(":memory:")
_FTS.execute("create virtual table t using fts5(heading, context, content, tokenize='trigram')")
_FTS.execute("insert into t values ('東京の天気', '', 'abc xyz コピー方法')")


def _compile_or_none(query):
    try:
        return compile_query(query)
    except SearchError:
        return None


@settings(max_examples=300, deadline=None)
@given(queries)
def test_any_query_compiles_to_a_valid_fts5_expression(query):
    compiled = _compile_or_none(query)
    if compiled is None:
        return
    for expression in (compiled.expression, compiled.negative_expression):
        if expression is not None:
            _FTS.execute("select rowid from t where t match ?", (expression,)).fetchall()


@settings(max_examples=300, deadline=None)
@given(queries.filter(lambda q: '"' not in q))
def test_phrases_are_substrings_at_or_above_the_floor(query):
    compiled = _compile_or_none(query)
    if compiled is None:
        return
    assert len(compiled.positive) <= PHRASE_CAP and len(compiled.negative) <= PHRASE_CAP
    # Positive phrases come from the positive text (R6.6: the raw query unless something was
    # excluded, then the remaining groups joined by single spaces, which the R6.14 fallback uses);
    # negative phrases come from the excluded groups of the raw query.
    for phrase in compiled.positive:
        assert phrase in compiled.positive_text
    for phrase in compiled.negative:
        assert phrase in query
    for phrase in compiled.positive + compiled.negative:
        assert len(phrase) >= TRIGRAM_FLOOR
        assert "\x00" not in phrase


@settings(max_examples=200, deadline=None)
@given(queries)
def test_compilation_is_deterministic_and_positive_text_has_no_exclusions(query):
    first, second = _compile_or_none(query), _compile_or_none(query)
    assert first == second
    if first is not None:
        assert all(not is_exclusion(g) for g in split_groups(first.positive_text))
