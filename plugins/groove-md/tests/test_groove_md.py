"""Tests for the groove-md parser (SPEC R3.17-R3.29) and its chunking (R3.25-R3.28, R3.84)."""

from __future__ import annotations

import groove_md
import pytest
from groove_md.parser import MarkdownParser, split_frontmatter, split_sections, yaml_reason

from grooveseek.builtins.chunkers import SectionsChunker
from grooveseek.errors import ParseError
from grooveseek.plugins import PluginSelection, load_plugins
from grooveseek.registry import Registry
from grooveseek.types import Chunk, ChunkSettings, ParseContext, ParsedDocument, Section

LONG = "This paragraph is comfortably longer than fifty UTF-8 bytes of text."
LONG_JA = "これは五十バイトを十分に超える長さの日本語の段落です。"  # 27 chars, 81 bytes


def parse(source: str | bytes, rel_path: str = "notes/a.md") -> tuple[ParsedDocument, list[str]]:
    warnings: list[str] = []
    data = source.encode("utf-8") if isinstance(source, str) else source
    doc = MarkdownParser().parse(data, rel_path, ParseContext(warn=warnings.append))
    return doc, warnings


def chunk(source: str, **settings: object) -> list[Chunk]:
    doc, _ = parse(source)
    return SectionsChunker().chunk(doc, ChunkSettings(**settings))  # type: ignore[arg-type]


def heads(doc: ParsedDocument) -> list[tuple[str | None, int | None, str]]:
    return [(s.heading, s.level, s.text) for s in doc.sections]


# --- plugin shape --------------------------------------------------------------------------------


class TestPlugin:
    def test_parser_attributes(self) -> None:
        p = MarkdownParser()
        assert (p.id, p.kind, p.media_type, p.chunker, p.policy_version) == (
            "md",
            "text",
            "text/markdown",
            "sections",
            "3",
        )

    def test_hook_registers_one_markdown_parser(self) -> None:
        got: list[object] = []
        groove_md.register_parsers(register=got.append)
        assert len(got) == 1 and isinstance(got[0], MarkdownParser)

    def test_loads_through_entry_point(self) -> None:
        registry = Registry.build(load_plugins(PluginSelection(parsers=("md",))), None)
        assert isinstance(registry.parsers["md"], MarkdownParser)
        assert registry.parser_for("Notes/README.MD") is registry.parsers["md"]

    def test_deterministic(self) -> None:
        source = "---\ntitle: T\ntags: [a]\n---\nintro\n## A\nbody\n"
        assert parse(source)[0] == parse(source)[0]

    def test_parse_for_read_matches_parse(self) -> None:
        source = "---\ntitle: T\n---\n## A\nbody\n"
        ctx = ParseContext(warn=lambda m: None)
        p = MarkdownParser()
        assert p.parse_for_read(source.encode(), "a.md", ctx) == p.parse(source.encode(), "a.md", ctx)


# --- decoding (R3.17) ----------------------------------------------------------------------------


class TestDecoding:
    def test_bom_stripped_before_frontmatter(self) -> None:
        doc, _ = parse(b"\xef\xbb\xbf---\ntitle: T\n---\nbody")
        assert doc.title == "T"
        assert doc.read_text == "---\ntitle: T\n---\nbody"

    def test_crlf_everywhere(self) -> None:
        data = b"---\r\ntitle: Windows\r\ntags: [a, b]\r\n---\r\n\r\nintro\r\n## H\r\nline1\r\nline2\r\n"
        doc, _ = parse(data)
        assert doc.title == "Windows"  # no stray "\r" leaks into values
        assert doc.tags == ("a", "b")
        assert heads(doc) == [(None, None, "intro"), ("H", 2, "line1\nline2")]
        # get_document serves the file as written (R3.29); only what is parsed is normalised.
        assert doc.read_text == data.decode()

    def test_lone_cr(self) -> None:
        doc, _ = parse(b"## H\rbody\rmore")
        assert heads(doc) == [("H", 2, "body\nmore")]

    @pytest.mark.parametrize(
        "data",
        [b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xd8", "# 日本語".encode("shift_jis"), b"## ok\n\xc3\x28"],
    )
    def test_not_utf8_raises(self, data: bytes) -> None:
        with pytest.raises(ParseError, match=r"^not valid UTF-8$"):
            parse(data)


# --- frontmatter (R3.18–R3.22) -------------------------------------------------------------------


class TestFrontmatterBlock:
    def test_no_frontmatter(self) -> None:
        doc, _ = parse("just text\n")
        assert doc.frontmatter is None and doc.frontmatter_unparsed is None
        assert (doc.title, doc.date, doc.topic, doc.depth, doc.tags) == (None, None, None, None, ())
        assert doc.system_tags == ()

    def test_fence_trailing_whitespace_allowed(self) -> None:
        doc, _ = parse("---  \ntitle: T\n--- \t\nbody")
        assert doc.title == "T"
        assert heads(doc) == [(None, None, "body")]

    @pytest.mark.parametrize("first", [" ---", "----", "--- x", "---x", "-- -"])
    def test_first_line_must_be_exactly_three_dashes(self, first: str) -> None:
        doc, _ = parse(f"{first}\ntitle: T\n---\nbody")
        assert doc.title is None and doc.frontmatter is None

    def test_closing_line_must_be_exactly_three_dashes(self) -> None:
        doc, _ = parse("---\ntitle: T\n----\nlist: x\n---\nbody")
        # "----" does not close the block, so it reaches the YAML parser (and breaks it); the block
        # ends at the real "---" on line 5, and the body after it is intact.
        assert doc.frontmatter_unparsed == "could not find expected ':' (line 4, column 1)"
        assert heads(doc) == [(None, None, "body")]

    def test_frontmatter_must_start_at_first_line(self) -> None:
        doc, _ = parse("\n---\ntitle: T\n---\nbody")
        assert doc.title is None
        assert doc.frontmatter is None

    def test_unclosed_fence_is_all_body(self) -> None:
        doc, warnings = parse("---\ntitle: T\n## H\nbody")
        assert doc.frontmatter is None and doc.frontmatter_unparsed is None
        assert doc.title is None
        assert heads(doc) == [(None, None, "---\ntitle: T"), ("H", 2, "body")]
        assert warnings == []

    def test_body_leading_blank_lines_removed(self) -> None:
        split = split_frontmatter("---\na: 1\n---\n\n  \n\nfirst\n\nsecond")
        assert split.yaml_text == "a: 1"
        assert split.body == "first\n\nsecond"

    def test_empty_block_is_empty_metadata(self) -> None:
        doc, _ = parse("---\n---\nbody")
        assert doc.frontmatter == {}
        assert doc.frontmatter_unparsed is None
        assert doc.system_tags == ()
        assert heads(doc) == [(None, None, "body")]

    def test_whitespace_and_comment_only_block(self) -> None:
        assert parse("---\n   \n---\nbody")[0].frontmatter == {}
        assert parse("---\n# just a comment\n---\nbody")[0].frontmatter == {}

    def test_frontmatter_only_file_has_no_sections(self) -> None:
        doc, _ = parse("---\ntitle: Only meta\n---\n\n\n")
        assert doc.sections == ()
        assert doc.title == "Only meta"

    def test_unparsed_frontmatter_only_file_has_no_sections(self) -> None:
        doc, _ = parse("---\n: : :\n  - [\n---\n")
        assert doc.sections == ()
        assert doc.frontmatter_unparsed

    def test_read_text_includes_frontmatter(self) -> None:
        source = "---\ntitle: T\n---\n\n## H\nbody\n"
        assert parse(source)[0].read_text == source

    def test_whole_mapping_kept(self) -> None:
        doc, _ = parse("---\ntitle: T\nstatus: draft\nowners: [a, b]\nmeta: {k: 1}\n---\nbody")
        assert doc.frontmatter == {"title": "T", "status": "draft", "owners": ["a", "b"], "meta": {"k": 1}}

    def test_yaml_safe_loader_refuses_python_objects(self) -> None:
        doc, _ = parse("---\nx: !!python/object/apply:os.system ['echo hi']\n---\nbody")
        assert doc.frontmatter_unparsed is not None
        assert doc.system_tags == ("frontmatter:unparsed",)


class TestUnparsed:
    def test_broken_yaml(self) -> None:
        doc, warnings = parse("---\ntitle: T\nbad: a: b\n---\nintro\n## H\nbody")
        assert doc.frontmatter_unparsed == "mapping values are not allowed here (line 3, column 7)"
        assert doc.system_tags == ("frontmatter:unparsed",)
        assert (doc.title, doc.date, doc.topic, doc.depth, doc.tags, doc.frontmatter) == (None,) * 4 + (
            (),
            None,
        )
        assert heads(doc) == [(None, None, "intro"), ("H", 2, "body")]
        assert warnings == []  # the indexer prints and counts the unparsed warning (R3.21)

    def test_reason_is_one_ascii_line(self) -> None:
        doc, _ = parse("---\nタイトル: [日本語\n---\nbody")
        reason = doc.frontmatter_unparsed
        assert reason is not None
        assert reason.isascii() and "\n" not in reason
        assert "line" in reason

    def test_non_ascii_in_reason_is_escaped(self) -> None:
        assert yaml_reason(ValueError("値 bad\nsecond line"), 2) == "\\u5024 bad"

    def test_reason_without_problem_uses_first_non_empty_line(self) -> None:
        assert yaml_reason(RecursionError("\nmaximum recursion depth exceeded\nmore"), 2) == (
            "maximum recursion depth exceeded"
        )

    def test_deeply_nested_yaml_is_unparsed_not_a_crash(self) -> None:
        doc, _ = parse("---\na: " + "[" * 3000 + "]" * 3000 + "\n---\nbody")
        assert doc.frontmatter_unparsed is not None
        assert heads(doc) == [(None, None, "body")]

    def test_frontmatter_that_is_a_list(self) -> None:
        doc, _ = parse("---\n- a\n- b\n---\nbody")
        assert doc.frontmatter_unparsed == "frontmatter must be a mapping of keys to values, got a list"
        assert doc.system_tags == ("frontmatter:unparsed",)
        assert doc.frontmatter is None
        assert heads(doc) == [(None, None, "body")]

    def test_frontmatter_that_is_a_scalar(self) -> None:
        doc, _ = parse("---\njust a string\n---\nbody")
        assert (
            doc.frontmatter_unparsed == "frontmatter must be a mapping of keys to values, got a single value"
        )

    def test_impossible_date_keeps_its_text(self) -> None:
        # R3.19: only a YAML error or a non-mapping makes the block unparsed; R3.14: a date scalar
        # that is no real date is "any other scalar", stored as its text.
        doc, warnings = parse("---\ntitle: T\ndate: 2026-02-30\n---\nbody")
        assert doc.frontmatter_unparsed is None and doc.system_tags == ()
        assert (doc.title, doc.date) == ("T", "2026-02-30")
        assert warnings == []

    def test_tab_indentation_is_unparsed(self) -> None:
        doc, _ = parse("---\ntags:\n\t- a\n---\nbody")
        assert (
            doc.frontmatter_unparsed == "found character '\\t' that cannot start any token (line 3, column 1)"
        )


class TestFrontmatterValues:
    def test_title_topic(self) -> None:
        doc, _ = parse("---\ntitle: 日本語のタイトル\ntopic: chromadb\n---\nbody", "deep-dive/other/x.md")
        assert (doc.title, doc.topic) == ("日本語のタイトル", "chromadb")

    def test_scalars_stringified(self) -> None:
        doc, _ = parse("---\ntitle: 123\ntopic: true\ndepth: 3\n---\nbody")
        assert (doc.title, doc.topic, doc.depth) == ("123", "true", "3")

    def test_depth_float_and_text(self) -> None:
        assert parse("---\ndepth: 1.5\n---\nb")[0].depth == "1.5"
        assert parse("---\ndepth: deep\n---\nb")[0].depth == "deep"

    def test_date_yaml_date(self) -> None:
        assert parse("---\ndate: 2026-04-10\n---\nb")[0].date == "2026-04-10"

    def test_date_quoted_string_kept(self) -> None:
        assert parse('---\ndate: "2026-04-10"\n---\nb')[0].date == "2026-04-10"
        assert parse("---\ndate: April 2026\n---\nb")[0].date == "April 2026"

    def test_date_timestamp_iso(self) -> None:
        assert parse("---\ndate: 2026-04-10T12:30:00Z\n---\nb")[0].date == "2026-04-10T12:30:00+00:00"
        assert parse("---\ndate: 2026-04-10 12:30:00\n---\nb")[0].date == "2026-04-10T12:30:00"
        assert parse("---\ndate: 2026-04-10T12:30:00+09:00\n---\nb")[0].date == "2026-04-10T12:30:00+09:00"

    def test_date_number(self) -> None:
        assert parse("---\ndate: 2026\n---\nb")[0].date == "2026"

    def test_null_and_empty_values_absent(self) -> None:
        doc, warnings = parse('---\ntitle:\ntopic: ""\ndate: ~\n---\nb')
        assert (doc.title, doc.topic, doc.date) == (None, None, None)
        assert warnings == []

    def test_non_scalar_title_ignored_with_warning(self) -> None:
        doc, warnings = parse("---\ntitle: [a, b]\n---\nb", "x/y.md")
        assert doc.title is None
        assert len(warnings) == 1 and warnings[0].startswith("x/y.md: ") and "'title'" in warnings[0]
        assert doc.frontmatter_unparsed is None

    def test_keys_are_case_sensitive(self) -> None:
        assert parse("---\nTitle: T\n---\nb")[0].title is None


class TestTags:
    @pytest.mark.parametrize(
        ("yaml_value", "tags"),
        [
            ("[rust, mcp]", ("rust", "mcp")),
            ("\n  - rust\n  - 日本語", ("rust", "日本語")),
            ("single", ("single",)),
            ("42", ("42",)),
            ("[1, 2.5, true, 2026-04-10]", ("1", "2.5", "true", "2026-04-10")),
            ("[]", ()),
            ("[a, ~, b]", ("a", "b")),
            ('["", a, ""]', ("a",)),
            ("[a, a]", ("a", "a")),  # de-duplication is the indexer's (effective_tags)
        ],
    )
    def test_accepted_shapes(self, yaml_value: str, tags: tuple[str, ...]) -> None:
        doc, warnings = parse(f"---\ntags: {yaml_value}\n---\nbody")
        assert doc.tags == tags
        assert warnings == []

    def test_absent_or_null(self) -> None:
        assert parse("---\ntitle: T\n---\nb")[0].tags == ()
        doc, warnings = parse("---\ntags:\n---\nb")
        assert doc.tags == () and warnings == []

    @pytest.mark.parametrize("yaml_value", ["{a: 1}", "[a, [b, c]]", "[a, {b: 1}]"])
    def test_other_shapes_give_no_tags_and_a_warning(self, yaml_value: str) -> None:
        doc, warnings = parse(f"---\ntitle: Kept\ntags: {yaml_value}\n---\nbody", "ai/notes.md")
        assert doc.tags == ()
        assert doc.title == "Kept"  # only the tags are lost, not the document's metadata
        assert doc.frontmatter_unparsed is None and doc.system_tags == ()
        assert len(warnings) == 1
        assert warnings[0].startswith("ai/notes.md: ") and "tags" in warnings[0]

    def test_self_referencing_tags(self) -> None:
        doc, warnings = parse("---\ntags: &t [a, *t]\n---\nbody")
        assert doc.tags == () and len(warnings) == 1


# --- sections (R3.24, R3.26) ---------------------------------------------------------------------


class TestSections:
    def test_headings_split_sections(self) -> None:
        doc, _ = parse("intro\n## Two\nbody 2\n### Three\nbody 3\n")
        assert heads(doc) == [(None, None, "intro"), ("Two", 2, "body 2"), ("Three", 3, "body 3")]

    def test_h1_and_h4_are_body_text(self) -> None:
        doc, _ = parse("# Title\n## A\n#### Deep\ntext\n##### Deeper\n")
        assert heads(doc) == [(None, None, "# Title"), ("A", 2, "#### Deep\ntext\n##### Deeper")]

    def test_heading_needs_space(self) -> None:
        doc, _ = parse("##NoSpace\n###Also\n##\n## \nbody")
        # Only the section's edges are trimmed; inner lines keep their trailing spaces.
        assert heads(doc) == [(None, None, "##NoSpace\n###Also\n##\n## \nbody")]

    def test_indented_heading_and_trimmed_text(self) -> None:
        doc, _ = parse("   ##   Spaced   heading  \t\nbody")
        assert heads(doc) == [("Spaced   heading", 2, "body")]

    def test_heading_inside_code_fence_is_body_text(self) -> None:
        # Departs from R3.24 on purpose (docs/retrieval.md): a shell comment in a fence is not a heading.
        doc, _ = parse("## Code\n```sh\n## not a comment here\necho hi\n```\n## Next\nx")
        assert heads(doc) == [("Code", 2, "```sh\n## not a comment here\necho hi\n```"), ("Next", 2, "x")]

    def test_tilde_fence_and_longer_closing_run(self) -> None:
        doc, _ = parse("## A\n~~~~\n## in\n~~~\n## still in\n~~~~~\n## B\ny")
        assert [h for h, _, _ in heads(doc)] == ["A", "B"]

    def test_unclosed_fence_runs_to_the_end(self) -> None:
        doc, _ = parse("## A\n```\n## in\n")
        assert [h for h, _, _ in heads(doc)] == ["A"]

    def test_anchor_is_stripped_from_the_heading_and_kept(self) -> None:
        doc, _ = parse("## 配列 {#array}\nx\n### Plain\ny\n## {#only-anchor}\nz")
        assert [(s.heading, s.anchor) for s in doc.sections] == [
            ("配列", "array"),
            ("Plain", None),
            ("{#only-anchor}", None),
        ]

    def test_sections_record_file_lines_after_frontmatter(self) -> None:
        doc, _ = parse("---\ntitle: T\n---\n\nintro\n## A\n\nbody one\nbody two\n\n## B\n")
        assert [(s.heading, s.start_line, s.end_line) for s in doc.sections] == [
            (None, 5, 5),
            ("A", 8, 9),
            ("B", 11, 11),
        ]

    def test_empty_preamble_not_emitted(self) -> None:
        doc, _ = parse("\n   \n## A\nx")
        assert heads(doc) == [("A", 2, "x")]

    def test_empty_heading_sections_emitted(self) -> None:
        doc, _ = parse("## A\n## B\n\n### C\n")
        assert heads(doc) == [("A", 2, ""), ("B", 2, ""), ("C", 3, "")]

    def test_body_joined_with_newlines_and_trimmed(self) -> None:
        doc, _ = parse("## A\n\n  first\n\n\nsecond  \n\n")
        assert heads(doc) == [("A", 2, "first\n\n\nsecond")]

    def test_heading_line_not_in_content(self) -> None:
        doc, _ = parse("## Heading\nbody")
        assert all("Heading" not in s.text for s in doc.sections)

    def test_empty_file(self) -> None:
        assert parse("")[0].sections == ()
        assert parse(" \n\n ")[0].sections == ()

    def test_japanese(self) -> None:
        doc, _ = parse("前書き\n## 概要\n" + LONG_JA + "\n### 詳細\n本文")
        assert heads(doc) == [(None, None, "前書き"), ("概要", 2, LONG_JA), ("詳細", 3, "本文")]

    def test_split_sections_returns_sections(self) -> None:
        assert split_sections("## A\nb") == (
            Section(heading="A", level=2, text="b", start_line=2, end_line=2),
        )


# --- with the sections chunker (R3.25, R3.27, R3.28, R3.84) --------------------------------------


class TestChunking:
    def test_exclude_headings_substring(self) -> None:
        source = f"## Intro\n{LONG}\n## 参考リンク (旧)\n- https://example.com dropped\n## Next\n{LONG}"
        chunks = chunk(source, exclude_headings=("参考リンク",))
        assert [c.heading for c in chunks] == ["Intro", "Next"]
        assert "dropped" not in "".join(c.content for c in chunks)

    def test_excluded_h2_keeps_its_h3(self) -> None:
        source = f"## Intro\n{LONG}\n## 参考リンク\nexcluded body\n### Child\n{LONG_JA}"
        chunks = chunk(source, exclude_headings=("参考リンク",))
        assert [(c.heading, c.level) for c in chunks] == [("Intro", 2), ("Child", 3)]

    def test_merge_small_sections(self) -> None:
        source = f"intro {LONG}\n## Short\ntiny\n### Deeper\nsmall too\n## Big\n{LONG}"
        chunks = chunk(source)
        assert [c.content for c in chunks] == [
            f"intro {LONG}\n\n## Short\n\ntiny\n\n## Deeper\n\nsmall too",
            LONG,
        ]
        assert [(c.chunk_index, c.heading, c.level) for c in chunks] == [(0, None, None), (1, "Big", 2)]

    def test_level3_merged_as_h2(self) -> None:
        chunks = chunk(f"## A\n{LONG}\n### Sub\nshort")
        assert chunks[0].content == f"{LONG}\n\n## Sub\n\nshort"

    def test_empty_heading_merged_as_heading_only(self) -> None:
        chunks = chunk(f"## A\n{LONG}\n## Empty\n## B\n{LONG_JA}")
        assert [c.content for c in chunks] == [f"{LONG}\n\n## Empty", LONG_JA]

    def test_first_chunk_never_merged(self) -> None:
        chunks = chunk("## Tiny\nx\n## Also tiny\ny")
        assert [(c.heading, c.content) for c in chunks] == [("Tiny", "x\n\n## Also tiny\n\ny")]

    def test_japanese_byte_threshold(self) -> None:
        # 16 characters are 48 bytes (< 50): merged; 17 characters are 51 bytes: not merged.
        chunks = chunk(f"## A\n{LONG}\n## B\n{'あ' * 17}\n## C\n{'い' * 16}")
        assert [c.heading for c in chunks] == ["A", "B"]
        assert chunks[1].content == "あ" * 17 + "\n\n## C\n\n" + "い" * 16
        assert chunks[1].token_count == len(chunks[1].content.encode()) // 4

    def test_breadcrumbs(self) -> None:
        source = f"intro {LONG}\n## 参考リンク\nx\n### Child\n{LONG}\n## Other\n{LONG}"
        chunks = chunk(source, contextual=True, title="Doc", exclude_headings=("参考リンク",))
        assert [c.context for c in chunks] == ["Doc", "Doc > 参考リンク > Child", "Doc > Other"]

    def test_no_breadcrumbs_when_off(self) -> None:
        assert {c.context for c in chunk(f"## A\n{LONG}", title="Doc")} == {""}
