"""Hostile frontmatter (issue 9): surrogate escapes, huge integers, blank-line runs, many headings.

A lone ``\\ud800`` escape makes the block unparsed (R3.21) with a reason naming its line, instead of
a string no UTF-8 writer accepts; a pair is joined into its character. An integer too long to
print in decimal keeps its text, so a declared field can store it. Long runs of blank lines and
of headings parse correctly here; that they parse in linear time is bench/parse_scaling.py's job.
"""

from __future__ import annotations

import pytest
from groove_md.parser import MarkdownParser, split_frontmatter, split_sections

from grooveseek.fieldschema import field_rows
from grooveseek.types import ParseContext, ParsedDocument


def parse(text: str) -> ParsedDocument:
    return MarkdownParser().parse(text.encode("utf-8"), "notes/a.md", ParseContext(warn=lambda m: None))


@pytest.mark.parametrize(
    "line",
    [
        'title: "\\ud800"',
        'tags: ["ok", "\\udfff"]',
        'topic: "a\\ud83d"',
        'date: "\\ud800-01-01"',
        'depth: "\\uDC00"',
        'custom: "x\\U0000d800"',
        '"\\ud800": key',
        'nested: {a: [{b: "\\ud800"}]}',
    ],
)
def test_a_lone_surrogate_escape_leaves_the_frontmatter_unparsed_naming_its_line(line: str) -> None:
    doc = parse(f"---\nok: 1\n{line}\n---\nThe body is still indexed.\n")
    assert doc.frontmatter_unparsed is not None
    assert "surrogate" in doc.frontmatter_unparsed and "(line 3, column" in doc.frontmatter_unparsed
    assert doc.frontmatter_unparsed.isascii()
    assert doc.title is None and doc.frontmatter is None
    assert doc.sections[0].text == "The body is still indexed."


def test_an_escaped_surrogate_pair_is_the_character_it_spells() -> None:
    doc = parse('---\ntitle: "grin \\ud83d\\ude00"\ntags: ["\\ud83d\\ude00"]\n---\nbody\n')
    assert doc.frontmatter_unparsed is None
    assert doc.title == "grin \U0001f600" and doc.tags == ("\U0001f600",)


def test_a_surrogate_under_an_alias_cycle_is_found_without_recursing_forever() -> None:
    doc = parse('---\na: &x [*x, "\\ud800"]\n---\nbody\n')
    assert doc.frontmatter_unparsed is not None and "surrogate" in doc.frontmatter_unparsed


@pytest.mark.parametrize("value", ["0x" + "f" * 5000, "0o" + "7" * 20000, "9" * 5000, "-" + "1" * 4400])
def test_an_integer_too_long_for_decimal_keeps_its_text_and_stores_as_a_field(value: str) -> None:
    doc = parse(f"---\ntitle: ok\ncustom: {value}\n---\nbody\n")
    assert doc.frontmatter_unparsed is None
    assert doc.frontmatter["custom"] == value
    assert field_rows(doc.frontmatter, ["custom"]) == (("custom", value),)


def test_an_integer_that_prints_is_still_an_integer() -> None:
    doc = parse("---\ncustom: 0x10\nbig: " + "9" * 4000 + "\n---\nbody\n")
    assert doc.frontmatter["custom"] == 16 and doc.frontmatter["big"] == int("9" * 4000)


def test_blank_lines_after_the_frontmatter_are_dropped_in_one_step() -> None:
    text = "---\ntitle: t\n---\n" + "\n" * 100_000 + "body\n"
    split = split_frontmatter(text)
    assert split.yaml_text == "title: t" and split.body == "body\n"


def test_many_headings_cut_into_one_section_each() -> None:
    body = "## h\n" * 50_000
    sections = split_sections(body)
    assert len(sections) == 50_000 and all(s.heading == "h" and s.text == "" for s in sections)
