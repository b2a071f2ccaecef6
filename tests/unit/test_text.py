"""Tests for grooveseek.text: decoding (R3.17), file-name title (R3.12), category/topic (R3.13), tags."""

from __future__ import annotations

import pytest

from grooveseek.errors import ParseError
from grooveseek.text import category_topic, decode_text, effective_tags, filename_title


class TestDecodeText:
    def test_plain_utf8(self) -> None:
        assert decode_text("héllo 日本語".encode()) == "héllo 日本語"

    def test_strips_one_leading_bom(self) -> None:
        assert decode_text(b"\xef\xbb\xbfbody") == "body"

    def test_only_one_bom_is_stripped(self) -> None:
        # A second BOM is content (U+FEFF), not an encoding marker.
        assert decode_text(b"\xef\xbb\xbf\xef\xbb\xbfx") == "\ufeffx"

    def test_bom_not_at_start_is_kept(self) -> None:
        assert decode_text(b"a\xef\xbb\xbfb") == "a\ufeffb"

    def test_crlf_becomes_lf(self) -> None:
        assert decode_text(b"a\r\nb\r\n") == "a\nb\n"

    def test_lone_cr_becomes_lf(self) -> None:
        assert decode_text(b"a\rb\r") == "a\nb\n"

    def test_mixed_newlines(self) -> None:
        # CR CR LF is a lone CR followed by a CRLF: two newlines, not three.
        assert decode_text(b"a\r\r\nb\n\rc") == "a\n\nb\n\nc"

    def test_empty(self) -> None:
        assert decode_text(b"") == ""
        assert decode_text(b"\xef\xbb\xbf") == ""

    @pytest.mark.parametrize(
        "data",
        [
            b"\xff\xfe\x00\x00",
            b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x80",
            "日本語".encode("shift_jis"),
            "é".encode("latin-1"),
            b"ok then truncated \xe3\x81",
            b"\xef\xbb\xbf\xc3\x28",
        ],
    )
    def test_invalid_utf8_raises_parse_error(self, data: bytes) -> None:
        with pytest.raises(ParseError) as info:
            decode_text(data)
        assert str(info.value) == "not valid UTF-8"

    def test_utf16_with_bom_is_not_utf8(self) -> None:
        with pytest.raises(ParseError):
            decode_text("text".encode("utf-16"))


class TestFilenameTitle:
    @pytest.mark.parametrize(
        ("rel_path", "title"),
        [
            ("notes/deep-dive-2026.txt", "deep dive 2026"),
            ("log_file.txt", "log file"),
            ("plain.txt", "plain"),
            ("README", "README"),
            ("notes/日本語ファイル.txt", "日本語ファイル"),
            ("a_b--c_d.txt", "a b c d"),
            ("MixedCase-Name.PDF", "MixedCase Name"),
            ("archive.tar.gz", "archive.tar"),
            (".bashrc", ".bashrc"),
            ("dir/.env.local", ".env"),
            ("-_-.txt", ""),
            ("  spaced   name .md", "spaced name"),
            ("a/b/c/d/e.md", "e"),
            ("trailing.", "trailing"),
            ("x/日本語 の  メモ_2026.md", "日本語 の メモ 2026"),
        ],
    )
    def test_examples(self, rel_path: str, title: str) -> None:
        assert filename_title(rel_path) == title

    def test_directory_names_do_not_leak(self) -> None:
        assert filename_title("some-dir.d/file.md") == "file"


class TestCategoryTopic:
    @pytest.mark.parametrize(
        ("rel_path", "expected"),
        [
            ("index.md", (None, None)),
            ("ai-news/x.md", ("ai-news", None)),
            ("deep-dive/chromadb/overview.md", ("deep-dive", "chromadb")),
            ("a/b/c/d/e.md", ("a", "b")),
            ("日本語/トピック/x.md", ("日本語", "トピック")),
        ],
    )
    def test_path_segments(self, rel_path: str, expected: tuple[str | None, str | None]) -> None:
        assert category_topic(rel_path) == expected


class TestEffectiveTags:
    def test_user_then_system(self) -> None:
        assert effective_tags(("a", "b"), ("code", "lang:rust")) == ("a", "b", "code", "lang:rust")

    def test_duplicates_dropped_first_kept(self) -> None:
        assert effective_tags(("b", "a", "b"), ("a", "code", "code")) == ("b", "a", "code")

    def test_user_tag_equal_to_system_tag_keeps_user_position(self) -> None:
        assert effective_tags(("code", "x"), ("frontmatter:unparsed", "code")) == (
            "code",
            "x",
            "frontmatter:unparsed",
        )

    def test_empty(self) -> None:
        assert effective_tags((), ()) == ()
        assert effective_tags([], ["frontmatter:unparsed"]) == ("frontmatter:unparsed",)

    def test_case_sensitive(self) -> None:
        assert effective_tags(("Tag", "tag"), ()) == ("Tag", "tag")


def test_raw_text_keeps_line_endings_and_drops_only_the_bom() -> None:
    from grooveseek.text import raw_text

    assert raw_text(b"\xef\xbb\xbfa\r\nb\rc\n") == "a\r\nb\rc\n"
    assert raw_text("日本\r\n".encode()) == "日本\r\n"
    assert (
        raw_text(b"\xef\xbb\xbf\xef\xbb\xbfx") == "\ufeffx"
    )  # one BOM is an encoding mark, a second is text
