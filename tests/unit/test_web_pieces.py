"""The search page's pure parts (issue 25): escaping, byte spans to marks, the URL form, lines."""

from __future__ import annotations

from starlette.datastructures import QueryParams

from grooveseek.web.docview import numbered_lines, query_terms, split_lines
from grooveseek.web.highlight import byte_spans_to_chars, highlighted
from grooveseek.web.html import esc, url
from grooveseek.web.pages import citation, hit_link
from grooveseek.web.params import MAX_PAGE, RESULT_WINDOW, SearchForm


def _bytes(text: str, part: str) -> tuple[int, int]:
    raw, sub = text.encode("utf-8"), part.encode("utf-8")
    start = raw.index(sub)
    return start, start + len(sub)


def test_byte_spans_mark_the_right_japanese_characters():
    text = "東京は今日は晴れ。配列のコピー方法"
    spans = [_bytes(text, "配列"), _bytes(text, "コピー")]
    assert byte_spans_to_chars(text, spans) == [(9, 11), (12, 15)]
    assert highlighted(text, spans) == "東京は今日は晴れ。<mark>配列</mark>の<mark>コピー</mark>方法"


def test_spans_off_character_boundaries_overlapping_or_out_of_range_are_tamed():
    text = "ab東京cd"
    start, end = _bytes(text, "東")
    # a span starting inside 東 widens to it; overlapping spans merge; out of range is clipped
    assert byte_spans_to_chars(text, [(start + 1, end), (start, end + 3), (90, 99), (5, 2)]) == [(2, 4)]
    assert highlighted("x<y>", [(0, 1)]) == "<mark>x</mark>&lt;y&gt;"
    assert highlighted("plain", None) == "plain"


def test_escaping_drops_what_html_cannot_carry():
    assert (
        esc("<script>\"x\" & 'y'</script>")
        == "&lt;script&gt;&quot;x&quot; &amp; &#x27;y&#x27;&lt;/script&gt;"
    )
    assert esc("a\x00b\x1bc") == "a\ufffdb\ufffdc"


def test_the_form_round_trips_through_its_url():
    query = QueryParams(
        "q=%E9%85%8D%E5%88%97&category=basic&tag_any=a,b&tag_any=c&path_glob=x/**&path_glob=!y/**&page=3"
    )
    form = SearchForm.from_query(query)
    assert form.q == "配列" and form.tag_any == ("a", "b", "c") and form.path_glob == ("x/**", "!y/**")
    assert form.search_args() == {
        "limit": RESULT_WINDOW,
        "category": "basic",
        "tags_any": ["a", "b", "c"],
        "path_globs": ["x/**", "!y/**"],
    }
    again = SearchForm.from_query(QueryParams(url("", form.params()).lstrip("?")))
    assert again == form
    assert SearchForm.from_query(QueryParams("q=x&page=99")).page == MAX_PAGE
    assert SearchForm.from_query(QueryParams("q=x&page=abc")).page == 1


def test_lines_are_counted_as_the_index_counts_them():
    assert split_lines("a\r\nb\rc\nd\n") == ["a", "b", "c", "d"]
    assert split_lines("a\x0cb\u2028c") == ["a\x0cb\u2028c"]  # only LF, CRLF and CR end a line
    html = numbered_lines("one\ntwo\nthree\n", 2, 3)
    assert '<li id="L1"><code>one</code></li>' in html and '<li id="L3" class="hit">' in html


def test_the_search_words_are_marked_inside_the_hit_lines_only():
    text = "配列の長さ\n配列をコピーする\nArray copy <b>\n"
    html = numbered_lines(text, 2, 3, query_terms('配列のコピー "copy" -length'))
    assert '<li id="L1"><code>配列の長さ</code></li>' in html  # outside the hit: untouched
    assert "<mark>配列</mark>を<mark>コピー</mark>する" in html
    assert "Array <mark>copy</mark> &lt;b&gt;" in html


def test_hits_link_their_lines_or_their_cited_section():
    text_hit = {"path": "a/b.md", "start_line": 4, "end_line": 9, "heading": "Intro"}
    assert hit_link(text_hit, "q") == "/ui/doc?path=a%2Fb.md&q=q&from=4&to=9#L4"
    assert citation(text_hit) == "a/b.md:4-9 · Intro"
    page_hit = {"path": "r.pdf", "heading": "p.3"}
    assert hit_link(page_hit, "") == "/ui/doc?path=r.pdf&section=p.3#hit"
    assert citation(page_hit) == "r.pdf · p.3"
