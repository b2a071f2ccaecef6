"""Tests for frontmatter scalar typing (SPEC R3.14, R3.15, R3.19, R3.20, R3.89) and raw read text (R3.29).

The parser reads YAML with 1.2 core typing and takes the string-valued built-in keys from the text
the user wrote; an impossible date keeps its text instead of making the block unparsed; and
``read_text`` keeps the file's own newlines while everything parsed uses normalised ones.
"""

from __future__ import annotations

import datetime as dt
import math
import re

import pytest
from groove_md.parser import MarkdownParser
from groove_md.yamlcore import load

from grooveseek.builtins.chunkers import SectionsChunker
from grooveseek.fieldschema import field_rows
from grooveseek.types import ChunkSettings, ParseContext, ParsedDocument

BOM = b"\xef\xbb\xbf"


def parse(source: str | bytes, rel_path: str = "notes/a.md") -> tuple[ParsedDocument, list[str]]:
    warnings: list[str] = []
    data = source.encode("utf-8") if isinstance(source, str) else source
    doc = MarkdownParser().parse(data, rel_path, ParseContext(warn=warnings.append))
    return doc, warnings


def front(block: str) -> ParsedDocument:
    doc, warnings = parse(f"---\n{block}\n---\nbody")
    assert doc.frontmatter_unparsed is None
    assert warnings == []
    return doc


# --- impossible dates (R3.14, R3.19) --------------------------------------------------------------


class TestImpossibleDates:
    @pytest.mark.parametrize(
        ("key", "value"),
        [
            ("date", "2026-13-01"),
            ("date", "2026-02-30"),
            ("date", "2026-04-10 25:00:00"),
            ("reviewed", "2026-02-29"),
            ("reviewed", "2026-02-30T10:00:00Z"),
        ],
    )
    def test_any_key_keeps_its_text_and_the_rest_of_the_block(self, key: str, value: str) -> None:
        doc = front(f"title: Kept\ntags: [a, b]\n{key}: {value}\nstatus: draft")
        assert doc.system_tags == ()
        assert (doc.title, doc.tags) == ("Kept", ("a", "b"))
        assert doc.frontmatter is not None and doc.frontmatter[key] == value
        assert doc.date == (value if key == "date" else None)

    def test_declared_field_stores_the_text(self) -> None:
        doc = front("reviewed: 2026-02-29\nstatus: draft")
        assert field_rows(doc.frontmatter, ["reviewed", "status"]) == (
            ("reviewed", "2026-02-29"),
            ("status", "draft"),
        )

    def test_real_dates_still_dates(self) -> None:
        doc = front("date: 2026-03-01\nreviewed: 2024-02-29")
        assert doc.date == "2026-03-01"
        assert doc.frontmatter == {"date": dt.date(2026, 3, 1), "reviewed": dt.date(2024, 2, 29)}

    def test_explicit_timestamp_tag_on_text_keeps_text(self) -> None:
        assert front("date: !!timestamp soon").date == "soon"


# --- YAML 1.1 implicit typing no longer rewrites the built-in keys (R3.15, R3.20) ----------------


class TestBuiltinKeysAsWritten:
    @pytest.mark.parametrize(
        ("line", "attr", "expected"),
        [
            ("title: No", "title", "No"),
            ("title: Yes", "title", "Yes"),
            ("title: True", "title", "True"),
            ('title: "No"', "title", "No"),
            ("topic: on", "topic", "on"),
            ("topic: off", "topic", "off"),
            ("topic: 1:30", "topic", "1:30"),
            ("depth: 010", "depth", "010"),
            ("depth: 0x10", "depth", "0x10"),
            ("depth: 0o10", "depth", "0o10"),
            ("depth: 1.10", "depth", "1.10"),
            ("depth: 1e3", "depth", "1e3"),
            ("depth: !!float 1.10", "depth", "1.10"),
            ("date: 1.10", "date", "1.10"),
            ("date: 2026", "date", "2026"),
            ("date: yes", "date", "yes"),
            ("date: 2026-4-1", "date", "2026-4-1"),  # a date-only value needs two-digit parts
            ("title: <<", "title", "<<"),
        ],
    )
    def test_value_is_the_source_text(self, line: str, attr: str, expected: str) -> None:
        assert getattr(front(line), attr) == expected

    def test_tags_are_the_source_text(self) -> None:
        assert front("tags: [yes, no, on]").tags == ("yes", "no", "on")
        assert front("tags: [1.10, 010, 0x10, True, 1:30]").tags == ("1.10", "010", "0x10", "True", "1:30")
        assert front("tags: off").tags == ("off",)

    def test_huge_integer_keeps_its_text(self) -> None:
        # Python refuses int() on more than 4300 digits; that used to make the block unparsed.
        digits = "9" * 5000
        doc = front(f"depth: {digits}")
        assert doc.depth == digits
        assert doc.frontmatter == {"depth": digits}

    @pytest.mark.parametrize("line", ["title: ~", "title: null", "title: NULL", "title:"])
    def test_null_is_absent(self, line: str) -> None:
        assert front(line).title is None


# --- the typed mapping for declared fields: YAML 1.2 core (R3.89) --------------------------------


class TestCoreSchemaTyping:
    @pytest.mark.parametrize(
        ("scalar", "value"),
        [
            ("true", True),
            ("True", True),
            ("TRUE", True),
            ("false", False),
            ("False", False),
            ("FALSE", False),
            ("tRUE", "tRUE"),
            ("yes", "yes"),
            ("No", "No"),
            ("on", "on"),
            ("OFF", "OFF"),
            ("~", None),
            ("null", None),
            ("Null", None),
            ("NULL", None),
            ("", None),
            ("nULL", "nULL"),
            ("10", 10),
            ("+12", 12),
            ("-7", -7),
            ("010", 10),
            ("0o10", 8),
            ("0x1f", 31),
            ("0b11", "0b11"),
            ("1_000", "1_000"),
            ("1:30", "1:30"),
            ("1.10", 1.1),
            ("-1.5e3", -1500.0),
            (".5", 0.5),
            (".inf", math.inf),
            ("-.Inf", -math.inf),
            ("=", "="),
            ("2026-03-01", dt.date(2026, 3, 1)),
            ("2026-03-01 09:05:00", dt.datetime(2026, 3, 1, 9, 5)),
            ("2026-02-30", "2026-02-30"),
        ],
    )
    def test_plain_scalar(self, scalar: str, value: object) -> None:
        loaded = load(f"v: {scalar}")
        assert loaded.values == {"v": value}
        assert type(loaded.values["v"]) is type(value)
        # The source-text view keeps every non-null scalar exactly as written.
        assert loaded.texts == {"v": None if value is None else scalar}

    def test_nan(self) -> None:
        assert math.isnan(load("v: .NaN").values["v"])

    @pytest.mark.parametrize(
        ("scalar", "value"),
        [
            ("!!int abc", "abc"),
            ("!!int 0x10", 16),
            ("!!bool yes", True),
            ("!!bool maybe", "maybe"),
            ("!!float 2", 2.0),
            ("!!float many", "many"),
            ("!!str 10", "10"),
        ],
    )
    def test_explicit_tags(self, scalar: str, value: object) -> None:
        assert load(f"v: {scalar}").values == {"v": value}

    def test_field_rows_follow_the_typed_values(self) -> None:
        doc = front("version: 010\nflag: yes\non: TRUE\nratio: 1.10")
        assert field_rows(doc.frontmatter, ["version", "flag", "on", "ratio"]) == (
            ("version", "10"),
            ("flag", "yes"),
            ("on", "true"),  # `on` as a key is a string key too, not the boolean True
            ("ratio", "1.1"),
        )

    def test_merge_keys_still_merge(self) -> None:
        doc = front("base: &b {title: Merged, depth: 010, topic: x}\n<<: *b\ntopic: own")
        assert (doc.title, doc.depth, doc.topic) == ("Merged", "010", "own")

    def test_unknown_tags_still_unparsed(self) -> None:
        doc, _ = parse("---\ntitle: T\nx: !!python/name:os.system\n---\nbody")
        assert doc.frontmatter_unparsed is not None and doc.title is None


# --- read_text is the file as written (R3.29, R7.12) ---------------------------------------------


class TestReadText:
    def test_bom_and_crlf(self) -> None:
        data = BOM + b"---\r\ntitle: T\r\n---\r\n\r\n## H\r\nbody\r\nmore\r\n"
        doc, _ = parse(data)
        # The BOM is an encoding mark, not text; the CRLFs are the file's own.
        assert doc.read_text == "---\r\ntitle: T\r\n---\r\n\r\n## H\r\nbody\r\nmore\r\n"
        assert doc.title == "T"
        assert [(s.heading, s.text) for s in doc.sections] == [("H", "body\nmore")]

    def test_lone_cr(self) -> None:
        doc, _ = parse(b"---\rtitle: T\r---\rintro\r## H\rbody\rmore")
        assert doc.read_text == "---\rtitle: T\r---\rintro\r## H\rbody\rmore"
        assert doc.title == "T"
        assert [(s.heading, s.text) for s in doc.sections] == [(None, "intro"), ("H", "body\nmore")]

    def test_mixed_newlines_kept(self) -> None:
        assert parse(b"a\r\nb\rc\nd")[0].read_text == "a\r\nb\rc\nd"

    def test_unparsed_document_keeps_raw_text(self) -> None:
        data = b"---\r\nbad: a: b\r\n---\r\nbody\r\n"
        doc, _ = parse(data)
        assert doc.frontmatter_unparsed is not None
        assert doc.read_text == data.decode()

    @pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
    def test_reported_line_is_the_same_line_in_read_text(self, newline: str) -> None:
        lines = ["---", "title: T", "bad: a: b", "---", "## H", "body"]
        doc, _ = parse(newline.join(lines))
        reason = doc.frontmatter_unparsed
        assert reason is not None
        match = re.search(r"\(line (\d+),", reason)
        assert match is not None
        line_no = int(match.group(1))
        assert line_no == 3
        assert re.split(r"\r\n|\r|\n", doc.read_text)[line_no - 1] == "bad: a: b"

    def test_markdown_chunk_lines_count_crlf_as_one_line(self) -> None:
        # A CRLF is one line end, as the normalised text counts it: line 2 is the paragraph.
        doc, _ = parse(b"## A\r\nThis paragraph is comfortably longer than fifty UTF-8 bytes.\r\n## B\r\nx")
        chunks = SectionsChunker().chunk(doc, ChunkSettings())
        assert [(c.start_line, c.end_line) for c in chunks] == [(2, 4)]
