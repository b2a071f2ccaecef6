"""Tests for the built-in chunkers ``sections``, ``whole`` and ``pages`` (R3.25–R3.28, R3.30, R3.84)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from grooveseek.builtins import chunkers
from grooveseek.builtins.chunkers import (
    CodeChunker,
    PagesChunker,
    SectionsChunker,
    WholeChunker,
    breadcrumb,
    is_excluded,
    merge_piece,
)
from grooveseek.interfaces import Chunker
from grooveseek.plugins import PluginSelection, load_plugins
from grooveseek.registry import Registry
from grooveseek.types import Chunk, ChunkSettings, ParsedDocument, Section

BIG = "This paragraph is comfortably longer than fifty UTF-8 bytes in total."
BIG2 = "Another paragraph that is also comfortably longer than fifty bytes."


def doc(*sections: Section, title: str | None = None) -> ParsedDocument:
    return ParsedDocument(sections=tuple(sections), read_text="", title=title)


def h2(heading: str, text: str) -> Section:
    return Section(heading=heading, level=2, text=text)


def h3(heading: str, text: str) -> Section:
    return Section(heading=heading, level=3, text=text)


def pre(text: str) -> Section:
    return Section(heading=None, level=None, text=text)


def sections(d: ParsedDocument, **kw: object) -> list[Chunk]:
    return SectionsChunker().chunk(d, ChunkSettings(**kw))  # type: ignore[arg-type]


class TestRegistration:
    def test_builtins_register_four_chunkers(self) -> None:
        registry = Registry.build(load_plugins(PluginSelection(parsers=())), None)
        assert set(registry.chunkers) == {"sections", "whole", "pages", "code"}
        assert all(isinstance(c, Chunker) for c in registry.chunkers.values())
        assert registry.chunkers["sections"].id == "sections"

    def test_hook_registers_instances(self) -> None:
        got: list[Chunker] = []
        chunkers.register_chunkers(got.append, None)
        assert [type(c) for c in got] == [SectionsChunker, WholeChunker, PagesChunker, CodeChunker]


class TestExclusion:
    def test_substring_match_drops_section(self) -> None:
        d = doc(h2("Intro", BIG), h2("参考リンク (旧)", BIG2 + " dropped"), h2("Next", BIG2))
        chunks = sections(d, exclude_headings=("参考リンク",))
        assert [c.heading for c in chunks] == ["Intro", "Next"]
        assert all("dropped" not in c.content for c in chunks)

    def test_case_sensitive(self) -> None:
        d = doc(h2("Intro", BIG), h2("References", BIG2))
        assert [c.heading for c in sections(d, exclude_headings=("references",))] == ["Intro", "References"]
        assert [c.heading for c in sections(d, exclude_headings=("Refer",))] == ["Intro"]

    def test_subsections_survive_excluded_parent(self) -> None:
        d = doc(h2("Intro", BIG), h2("参考リンク", "body of excluded " * 5), h3("Child", BIG2))
        chunks = sections(d, exclude_headings=("参考リンク",))
        assert [(c.heading, c.level) for c in chunks] == [("Intro", 2), ("Child", 3)]
        assert "body of excluded" not in "".join(c.content for c in chunks)

    def test_subsection_matching_too_is_dropped(self) -> None:
        d = doc(h2("Intro", BIG), h2("参考リンク", BIG), h3("参考リンク 2", BIG2))
        assert [c.heading for c in sections(d, exclude_headings=("参考リンク",))] == ["Intro"]

    def test_preamble_never_excluded(self) -> None:
        assert is_excluded(None, ("",)) is False
        assert [c.heading for c in sections(doc(pre(BIG)), exclude_headings=("x",))] == [None]

    def test_empty_entry_is_ignored(self) -> None:
        assert is_excluded("anything", ("",)) is False
        assert is_excluded("anything", ("", "thin")) is True

    def test_excluded_first_section_makes_next_the_first_chunk(self) -> None:
        d = doc(h2("Drop me", BIG), h2("Small", "tiny"), h2("Big", BIG2))
        chunks = sections(d, exclude_headings=("Drop",))
        # "Small" is now the first chunk, so it is never merged even though it is short.
        assert [(c.heading, c.content) for c in chunks] == [("Small", "tiny"), ("Big", BIG2)]

    def test_small_section_after_excluded_merges_into_chunk_before(self) -> None:
        d = doc(h2("A", BIG), h2("Drop", BIG2), h2("B", "short"))
        chunks = sections(d, exclude_headings=("Drop",))
        assert [c.content for c in chunks] == [BIG + "\n\n## B\n\nshort"]


class TestMerge:
    def test_first_chunk_never_merged(self) -> None:
        chunks = sections(doc(h2("Tiny", "x")))
        assert [(c.heading, c.content) for c in chunks] == [("Tiny", "x")]

    def test_small_appended_with_heading(self) -> None:
        chunks = sections(doc(h2("A", BIG), h2("B", "small body")))
        assert len(chunks) == 1
        assert chunks[0].content == BIG + "\n\n## B\n\nsmall body"
        assert (chunks[0].heading, chunks[0].level) == ("A", 2)

    def test_level3_merged_as_double_hash(self) -> None:
        chunks = sections(doc(h2("A", BIG), h3("Deep", "small")))
        assert chunks[0].content == BIG + "\n\n## Deep\n\nsmall"
        assert "###" not in chunks[0].content

    def test_empty_body_heading_appends_heading_only(self) -> None:
        chunks = sections(doc(h2("A", BIG), h2("Empty", ""), h2("Also", "")))
        assert chunks[0].content == BIG + "\n\n## Empty\n\n## Also"

    def test_previous_empty_content_no_leading_join(self) -> None:
        chunks = sections(doc(h2("A", ""), h2("B", "small")))
        assert [(c.heading, c.content) for c in chunks] == [("A", "## B\n\nsmall")]

    def test_previous_empty_then_empty(self) -> None:
        chunks = sections(doc(h2("A", ""), h2("B", "")))
        assert chunks[0].content == "## B"

    def test_threshold_is_utf8_bytes(self) -> None:
        # 17 Japanese characters = 51 bytes: not small. 16 characters = 48 bytes: small.
        chunks = sections(doc(h2("A", BIG), h2("B", "あ" * 17), h2("C", "あ" * 16)))
        assert [c.heading for c in chunks] == ["A", "B"]
        assert chunks[1].content == "あ" * 17 + "\n\n## C\n\n" + "あ" * 16

    def test_exactly_50_bytes_is_not_merged(self) -> None:
        chunks = sections(doc(h2("A", BIG), h2("B", "x" * 50), h2("C", "y" * 49)))
        assert [c.heading for c in chunks] == ["A", "B"]
        assert chunks[1].content.endswith("## C\n\n" + "y" * 49)

    def test_byte_threshold_uses_trimmed_content(self) -> None:
        chunks = sections(doc(h2("A", BIG), h2("B", "   short   \n\n")))
        assert chunks[0].content == BIG + "\n\n## B\n\nshort"

    def test_chain_of_small_sections(self) -> None:
        chunks = sections(doc(pre(BIG), h2("a", "1"), h3("b", "2"), h2("c", BIG2), h2("d", "4")))
        assert [c.content for c in chunks] == [
            BIG + "\n\n## a\n\n1\n\n## b\n\n2",
            BIG2 + "\n\n## d\n\n4",
        ]
        assert [(c.heading, c.level) for c in chunks] == [(None, None), ("c", 2)]

    def test_small_preamble_is_first_chunk(self) -> None:
        chunks = sections(doc(pre("hi"), h2("A", "tiny")))
        assert [(c.heading, c.content) for c in chunks] == [(None, "hi\n\n## A\n\ntiny")]

    def test_merge_piece(self) -> None:
        assert merge_piece("H", "body") == "## H\n\nbody"
        assert merge_piece("H", "") == "## H"
        assert merge_piece(None, "body") == "body"

    def test_merged_chunk_line_range_spans_its_sections(self) -> None:
        first = Section(heading="A", level=2, text=BIG, start_line=1, end_line=4)
        small = Section(heading="B", level=2, text="x", start_line=5, end_line=6)
        chunks = sections(doc(first, small))
        assert (chunks[0].start_line, chunks[0].end_line) == (1, 6)

    def test_merged_chunk_without_line_numbers_stays_without(self) -> None:
        chunks = sections(
            doc(h2("A", BIG), Section(heading="B", level=2, text="x", start_line=5, end_line=6))
        )
        assert (chunks[0].start_line, chunks[0].end_line) == (None, None)

    def test_headingless_small_section_joined_without_marker(self) -> None:
        chunks = sections(doc(h2("A", BIG), pre("loose")))
        assert chunks[0].content == BIG + "\n\nloose"


class TestNumbering:
    def test_chunk_index_and_token_count(self) -> None:
        chunks = sections(doc(pre(BIG), h2("A", BIG2), h2("B", "日本語の本文です。" * 3)))
        assert [c.chunk_index for c in chunks] == [0, 1, 2]
        for c in chunks:
            assert c.token_count == len(c.content.encode("utf-8")) // 4
        assert chunks[2].token_count == 81 // 4  # 27 characters x 3 bytes

    def test_quality_left_at_default(self) -> None:
        # The indexer scores chunks; the chunker must not pretend to.
        assert sections(doc(h2("A", "TBD")))[0].quality_score == 1.0

    def test_empty_document(self) -> None:
        assert sections(doc()) == []


class TestBreadcrumbs:
    def test_off_means_empty_context(self) -> None:
        chunks = sections(doc(h2("A", BIG)), title="Doc")
        assert chunks[0].context == ""

    def test_title_ancestors_and_heading(self) -> None:
        d = doc(pre(BIG), h2("Setup", BIG), h3("Linux", BIG2), h3("macOS", BIG2), h2("Usage", BIG))
        chunks = sections(d, contextual=True, title="Guide")
        assert [c.context for c in chunks] == [
            "Guide",
            "Guide > Setup",
            "Guide > Setup > Linux",
            "Guide > Setup > macOS",
            "Guide > Usage",
        ]

    def test_excluded_heading_still_an_ancestor(self) -> None:
        d = doc(h2("Intro", BIG), h2("参考リンク", BIG), h3("Child", BIG2))
        chunks = sections(d, contextual=True, title="T", exclude_headings=("参考リンク",))
        assert [c.context for c in chunks] == ["T > Intro", "T > 参考リンク > Child"]

    def test_level3_without_level2_parent(self) -> None:
        chunks = sections(doc(h3("Orphan", BIG)), contextual=True, title="T")
        assert chunks[0].context == "T > Orphan"

    def test_level2_pops_level3(self) -> None:
        d = doc(h2("A", BIG), h3("B", BIG), h2("C", BIG), h3("D", BIG))
        assert [c.context for c in sections(d, contextual=True, title="T")] == [
            "T > A",
            "T > A > B",
            "T > C",
            "T > C > D",
        ]

    def test_empty_title_dropped(self) -> None:
        assert sections(doc(h2("A", BIG)), contextual=True, title="")[0].context == "A"
        assert sections(doc(pre(BIG)), contextual=True, title="")[0].context == ""

    def test_consecutive_duplicates_dropped(self) -> None:
        d = doc(h2("Guide", BIG), h3("Guide", BIG2), h3("Other", BIG2))
        assert [c.context for c in sections(d, contextual=True, title="Guide")] == [
            "Guide",
            "Guide",
            "Guide > Other",
        ]

    def test_non_consecutive_duplicates_kept(self) -> None:
        assert breadcrumb("A", ["B"], "A") == "A > B > A"

    def test_cut_to_200_characters(self) -> None:
        crumb = breadcrumb("T" * 150, ["見出し" * 30], "own")
        assert len(crumb) <= 200
        assert crumb.startswith("T" * 150 + " > 見出し")
        assert not crumb.endswith(" ")

    def test_cut_landing_on_separator_leaves_no_trailing_space(self) -> None:
        # "x"*199 + " > y" cut at 200 ends in the separator's space, which is removed.
        assert breadcrumb("x" * 199, [], "y") == "x" * 199

    def test_exactly_200_is_kept_whole(self) -> None:
        crumb = breadcrumb("x" * 195, [], "yy")
        assert crumb == "x" * 195 + " > yy"
        assert len(crumb) == 200

    def test_merged_chunk_keeps_first_sections_context(self) -> None:
        d = doc(h2("A", BIG), h3("small", "x"))
        chunks = sections(d, contextual=True, title="T")
        assert [c.context for c in chunks] == ["T > A"]

    def test_parser_context_kept(self) -> None:
        scoped = Section(heading="method", level=None, text=BIG, context="impl Foo")
        assert sections(doc(scoped))[0].context == "impl Foo"
        assert sections(doc(scoped), contextual=True, title="T")[0].context == "impl Foo"


class TestWhole:
    def test_one_chunk_no_heading(self) -> None:
        chunks = WholeChunker().chunk(doc(pre("  hello\n\nworld  ")), ChunkSettings())
        assert [(c.chunk_index, c.heading, c.level, c.content) for c in chunks] == [
            (0, None, None, "hello\n\nworld")
        ]
        assert chunks[0].token_count == len(b"hello\n\nworld") // 4

    def test_sections_joined(self) -> None:
        chunks = WholeChunker().chunk(doc(pre("a"), h2("H", "b"), pre("  "), pre("c\n")), ChunkSettings())
        assert [c.content for c in chunks] == ["a\n\nb\n\nc"]

    def test_empty(self) -> None:
        assert WholeChunker().chunk(doc(), ChunkSettings()) == []
        assert WholeChunker().chunk(doc(pre(" \n\t ")), ChunkSettings()) == []

    def test_exclude_headings_does_not_apply(self) -> None:
        chunks = WholeChunker().chunk(
            doc(pre("## 参考リンク\nbody")), ChunkSettings(exclude_headings=("参考リンク",))
        )
        assert chunks[0].content == "## 参考リンク\nbody"

    def test_context(self) -> None:
        d = doc(pre("body"))
        assert WholeChunker().chunk(d, ChunkSettings(title="notes"))[0].context == ""
        assert WholeChunker().chunk(d, ChunkSettings(title="notes", contextual=True))[0].context == "notes"


class TestPages:
    def test_one_chunk_per_section_no_merge(self) -> None:
        d = doc(Section("p.1", None, "x"), Section("p.2", None, "y"), Section("p.3", None, BIG))
        chunks = PagesChunker().chunk(d, ChunkSettings())
        assert [(c.chunk_index, c.heading, c.content) for c in chunks] == [
            (0, "p.1", "x"),
            (1, "p.2", "y"),
            (2, "p.3", BIG),
        ]
        assert [c.token_count for c in chunks] == [0, 0, len(BIG) // 4]

    def test_empty_pages_skipped_and_numbering_contiguous(self) -> None:
        d = doc(Section("p.1", None, "a"), Section("p.2", None, "  "), Section("p.3", None, "c"))
        chunks = PagesChunker().chunk(d, ChunkSettings())
        assert [(c.chunk_index, c.heading) for c in chunks] == [(0, "p.1"), (1, "p.3")]

    def test_breadcrumb(self) -> None:
        d = doc(Section("Slide 1: Intro", None, "a"))
        assert (
            PagesChunker().chunk(d, ChunkSettings(contextual=True, title="Deck"))[0].context
            == "Deck > Slide 1: Intro"
        )
        assert PagesChunker().chunk(d, ChunkSettings(title="Deck"))[0].context == ""

    def test_section_fields_carried(self) -> None:
        page = Section("p.1", None, "a", start_line=3, end_line=9, symbol_kind="k", is_definition=True)
        c = PagesChunker().chunk(doc(page), ChunkSettings())[0]
        assert (c.start_line, c.end_line, c.symbol_kind, c.is_definition) == (3, 9, "k", True)

    def test_exclude_headings_ignored(self) -> None:
        d = doc(Section("p.1", None, "a"))
        assert len(PagesChunker().chunk(d, ChunkSettings(exclude_headings=("p.",)))) == 1


# --- property test -------------------------------------------------------------------------------

_texts = st.one_of(
    st.just(""),
    st.text(alphabet="abc 日本\n", max_size=30),
    st.text(alphabet="abcdefgh 語\n", min_size=40, max_size=90),
)
_headings = st.sampled_from(["Intro", "Setup", "参考リンク", "参考リンク (旧)", "Notes", "FAQ", "x"])


@st.composite
def _documents(draw: st.DrawFn) -> tuple[ParsedDocument, tuple[str, ...]]:
    items: list[Section] = []
    preamble = draw(_texts).strip()
    if preamble:
        items.append(pre(preamble))
    for _ in range(draw(st.integers(0, 8))):
        items.append(
            Section(heading=draw(_headings), level=draw(st.sampled_from([2, 3])), text=draw(_texts).strip())
        )
    excludes = tuple(draw(st.lists(st.sampled_from(["参考リンク", "FAQ", "Nope"]), max_size=2)))
    return doc(*items), excludes


@settings(max_examples=300, deadline=None)
@given(_documents(), st.booleans())
def test_sections_chunker_properties(case: tuple[ParsedDocument, tuple[str, ...]], contextual: bool) -> None:
    d, excludes = case
    chunks = SectionsChunker().chunk(
        d, ChunkSettings(exclude_headings=excludes, contextual=contextual, title="T")
    )
    kept = [s for s in d.sections if not is_excluded(s.heading, excludes)]

    # chunk_index is contiguous from 0.
    assert [c.chunk_index for c in chunks] == list(range(len(chunks)))
    # token_count is UTF-8 bytes // 4.
    assert all(c.token_count == len(c.content.encode("utf-8")) // 4 for c in chunks)
    # Nothing kept is lost, and a non-empty document yields at least one chunk.
    assert bool(chunks) == bool(kept)
    for s in kept:
        assert any(s.text in c.content for c in chunks)
    # The first chunk is never merged away: it is the first kept section, with its heading and level.
    if kept:
        assert (chunks[0].heading, chunks[0].level) == (kept[0].heading, kept[0].level)
        assert chunks[0].content.startswith(kept[0].text)
    # Every chunk but the first starts from a section of at least 50 bytes; merged pieces are "##".
    for c in chunks[1:]:
        assert len(c.content.encode("utf-8")) >= 50
        assert not c.content.startswith("\n") and not c.content.endswith("\n")
    # Context follows [contextual].
    assert all((c.context != "") == contextual for c in chunks)


def _words(texts) -> list[int]:
    return [len(t.split()) for t in texts]


def test_a_breadcrumb_longer_than_the_window_leaves_pieces_of_32_tokens() -> None:
    """The piece floor (``MIN_PIECE_TOKENS``): a breadcrumb that eats the whole window must not
    leave pieces of a few tokens each (issue 20 item 6: halving the floor kept every test green)."""
    context = " ".join(f"crumb{i}" for i in range(100))  # 100 tokens of breadcrumb, a 40-token window
    settings = ChunkSettings(max_tokens=40, count_tokens=_words, contextual=True)
    assert chunkers.piece_budget(settings, context) == 32
    body = "\n\n".join(" ".join(f"w{p}x{i}" for i in range(8)) for p in range(16))  # 128 tokens
    chunk = Chunk(chunk_index=0, heading="H", level=2, content=body, token_count=0, context=context)
    pieces = chunkers.split_chunks([chunk], settings)
    assert [len(p.content.split()) for p in pieces] == [32, 32, 32, 32]
