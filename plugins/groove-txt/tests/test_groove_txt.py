"""Tests for the groove-txt parser plugin (SPEC R3.12, R3.17, R3.30), with the ``whole`` chunker."""

from __future__ import annotations

import groove_txt
import pytest
from groove_txt.parser import TextParser

from grooveseek.builtins.chunkers import WholeChunker
from grooveseek.errors import ParseError
from grooveseek.plugins import PluginSelection, load_plugins
from grooveseek.registry import Registry
from grooveseek.types import ChunkSettings, ParseContext, ParsedDocument


def parse(data: bytes | str, rel_path: str = "notes/deep-dive-2026.txt") -> ParsedDocument:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return TextParser().parse(raw, rel_path, ParseContext(warn=pytest.fail))


class TestPlugin:
    def test_parser_attributes(self) -> None:
        p = TextParser()
        assert (p.id, p.kind, p.media_type, p.chunker, p.policy_version) == (
            "txt",
            "text",
            "text/plain",
            "whole",
            "2",
        )

    def test_hook_registers_one_text_parser(self) -> None:
        got: list[object] = []
        groove_txt.register_parsers(register=got.append)
        assert len(got) == 1 and isinstance(got[0], TextParser)

    def test_loads_through_entry_point_with_its_chunker(self) -> None:
        registry = Registry.build(load_plugins(PluginSelection(parsers=("txt",))), None)
        parser = registry.parsers["txt"]
        assert isinstance(parser, TextParser)
        assert isinstance(registry.chunkers[parser.chunker], WholeChunker)
        assert registry.parser_for("a/NOTES.TXT") is parser
        assert registry.parser_for("a/notes.md") is None


class TestParse:
    def test_one_section_with_trimmed_text(self) -> None:
        doc = parse("\n\n  Hello world.\nSecond line.  \n\n")
        assert [(s.heading, s.level, s.text) for s in doc.sections] == [
            (None, None, "Hello world.\nSecond line.")
        ]

    def test_title_from_file_name(self) -> None:
        assert parse("x").title == "deep dive 2026"
        assert parse("x", "日本語_メモ.txt").title == "日本語 メモ"
        assert parse("x", "a/.hidden").title == ".hidden"

    def test_title_none_when_name_empties(self) -> None:
        assert parse("x", "--.txt").title is None

    def test_no_frontmatter(self) -> None:
        doc = parse("---\ntitle: Not metadata\n---\nbody")
        assert doc.title == "deep dive 2026"
        assert doc.frontmatter is None and doc.frontmatter_unparsed is None
        assert doc.sections[0].text == "---\ntitle: Not metadata\n---\nbody"

    def test_headings_are_text(self) -> None:
        doc = parse("## 次の深堀り候補\n\nbody.")
        assert [(s.heading, s.text) for s in doc.sections] == [(None, "## 次の深堀り候補\n\nbody.")]

    def test_bom_and_newlines_normalised_for_indexing_but_not_for_reading(self) -> None:
        doc = parse(b"\xef\xbb\xbfline1\r\nline2\rline3\r\n")
        assert doc.sections[0].text == "line1\nline2\nline3"
        # get_document returns the file as written; only the BOM (an encoding mark) is dropped (R7.12).
        assert doc.read_text == "line1\r\nline2\rline3\r\n"

    @pytest.mark.parametrize("data", [b"", b"   \n\n\t ", b"\xef\xbb\xbf", b"\r\n\r\n"])
    def test_empty_file_has_no_sections(self, data: bytes) -> None:
        assert parse(data).sections == ()

    @pytest.mark.parametrize("data", [b"\x00\x01\xff\xfe", "日本語".encode("cp932"), b"abc\x80"])
    def test_not_utf8_raises(self, data: bytes) -> None:
        with pytest.raises(ParseError, match=r"^not valid UTF-8$"):
            parse(data)

    def test_metadata_empty(self) -> None:
        doc = parse("x")
        assert (doc.date, doc.topic, doc.depth, doc.tags, doc.system_tags) == (None, None, None, (), ())

    def test_deterministic(self) -> None:
        assert parse("same text") == parse("same text")


class TestChunk:
    def test_one_chunk_without_heading(self) -> None:
        doc = parse("  first paragraph\n\nsecond paragraph \n")
        chunks = WholeChunker().chunk(doc, ChunkSettings(title=doc.title or ""))
        assert [(c.chunk_index, c.heading, c.level, c.content) for c in chunks] == [
            (0, None, None, "first paragraph\n\nsecond paragraph")
        ]
        assert chunks[0].token_count == len(b"first paragraph\n\nsecond paragraph") // 4

    def test_empty_file_no_chunk(self) -> None:
        assert WholeChunker().chunk(parse("\n \n"), ChunkSettings()) == []

    def test_exclude_headings_do_not_apply(self) -> None:
        doc = parse("## 参考リンク\nkept")
        chunks = WholeChunker().chunk(doc, ChunkSettings(exclude_headings=("参考リンク",)))
        assert [c.content for c in chunks] == ["## 参考リンク\nkept"]

    def test_breadcrumb_is_file_name_title(self) -> None:
        doc = parse("body")
        chunks = WholeChunker().chunk(doc, ChunkSettings(contextual=True, title=doc.title or ""))
        assert chunks[0].context == "deep dive 2026"
