"""The .docx parser's rules (SPEC §3.7, §3.10, R3.44), on packages written by the tests."""

from __future__ import annotations

import pytest
from groove_office.docx_parser import DocxParser
from groove_office.docx_styles import StyleTable, heading_level_of_name

from grooveseek import ParseError
from grooveseek.builtins.chunkers import SectionsChunker
from grooveseek.testing import check_parser, recording_parse_context
from grooveseek.types import ChunkSettings

BODY = "This paragraph is long enough to stand as a chunk of its own in the index."


def parse(data: bytes, rel: str = "docs/plan.docx", **limits):
    ctx = recording_parse_context(**limits)
    return DocxParser().parse(data, rel, ctx), ctx.warnings


def test_contract(officegen):
    check_parser(DocxParser(), officegen.docx(officegen.p(BODY)), "a/b.docx", garbage=b"PK\x03\x04 broken")


def test_paragraph_runs_tabs_and_breaks(officegen):
    doc, _ = parse(officegen.docx(officegen.p("one\ttwo\nthree", style="Normal")))
    assert doc.sections[0].text == "one\ttwo\nthree"  # the pPr tab stop is not text


def test_headings_resolved_through_styles_names_chains_and_outline_levels(officegen):
    styles = officegen.styles_xml(
        officegen.style("1", "heading 1"),  # Japanese Word: the ID is "1", the name says heading
        officegen.style("KBHeading", "KB Heading", based="1"),  # custom style based on a heading
        officegen.style("TOCHeading", "TOC Heading", based="1", outline=9),  # made body text again
        officegen.style("Heading2", "Body Lookalike"),  # spelled like a heading, named otherwise
        officegen.style("Outlined", "Outlined", outline=0),  # an outline level alone is no heading
        officegen.style("Loop1", "Loop one", based="Loop2"),
        officegen.style("Loop2", "Loop two", based="Loop1"),
    )
    body = "".join(
        [
            officegen.p("Chapter", "1"),
            officegen.p(BODY),
            officegen.p("Custom", "KBHeading"),
            officegen.p(BODY),
            officegen.p("Contents", "TOCHeading"),
            officegen.p("Lookalike", "Heading2"),
            officegen.p("Outline only", "Outlined"),
            officegen.p("Cycle", "Loop1"),
            officegen.p("Unknown id", "Heading3"),  # not in the table: read by its spelling
            officegen.p(BODY),
        ]
    )
    doc, warnings = parse(officegen.docx(body, styles=styles))
    assert warnings == []
    assert [(s.heading, s.level) for s in doc.sections] == [("Chapter", 1), ("Custom", 1), ("Unknown id", 3)]
    assert doc.sections[1].text == f"{BODY}\nContents\nLookalike\nOutline only\nCycle"


def test_heading_name_rule():
    assert heading_level_of_name("Heading 2") == 2
    assert heading_level_of_name("heading12") == 12
    assert heading_level_of_name("Heading  3") == 3
    assert heading_level_of_name("heading 0") is None
    assert heading_level_of_name("heading 256") is None
    assert heading_level_of_name("Subheading 1") is None


def test_first_definition_wins_and_nameless_style_is_named_by_its_id(officegen):
    from lxml import etree

    table = StyleTable(
        etree.fromstring(
            officegen.styles_xml(
                officegen.style("H", "heading 2"),
                officegen.style("H", "Normal"),
                officegen.style("heading4", None),
                officegen.style("Heading5", "Plain run", kind="character"),
            ).encode()
        )
    )
    assert table.level("H") == 2
    assert table.level("heading4") == 4
    assert table.level("Heading5") == 5  # a character style is not in the table: the spelling decides


def test_spelling_fallback_without_styles_and_with_malformed_styles(officegen):
    body = officegen.p("Intro", "Heading1") + officegen.p(BODY) + officegen.p("1", "1") + officegen.p(BODY)
    doc, warnings = parse(officegen.docx(body))
    assert warnings == []  # a missing styles part is not worth a warning
    assert [(s.heading, s.level) for s in doc.sections] == [("Intro", 1)]
    doc, warnings = parse(officegen.docx(body, styles="<w:styles"), "x.docx")
    assert [(s.heading, s.level) for s in doc.sections] == [("Intro", 1)]
    assert len(warnings) == 1 and warnings[0].startswith("x.docx: word/styles.xml ignored: malformed XML")


def test_styles_over_the_budget_fall_back_to_spelling_with_a_warning(officegen):
    styles = officegen.styles_xml(officegen.style("1", "heading 1"), "<!--" + " " * 20_000 + "-->")
    body = (
        officegen.p("Intro", "Heading1")
        + officegen.p(BODY)
        + officegen.p("Japanese", "1")
        + officegen.p(BODY)
    )
    data = officegen.docx(body, styles=styles)
    doc, warnings = parse(data, max_decompressed_size=10_000)
    assert [s.heading for s in doc.sections] == ["Intro"]
    assert "word/styles.xml skipped" in warnings[0] and "[index].max_decompressed_size" in warnings[0]
    doc, warnings = parse(data)
    assert [s.heading for s in doc.sections] == ["Intro", "Japanese"]
    assert warnings == []


def test_bodyless_headings_fold_into_the_next_section_and_trailing_ones_drop(officegen):
    body = "".join(
        [
            officegen.p("Preface text before any heading, long enough to be kept as a chunk."),
            officegen.p("Part one", "Heading1"),
            officegen.p("Chapter A", "Heading2"),
            officegen.p(BODY),
            officegen.p("Dangling", "Heading2"),
        ]
    )
    doc, _ = parse(officegen.docx(body))
    assert [(s.heading, s.level) for s in doc.sections] == [(None, None), ("Chapter A", 2)]
    assert doc.sections[1].text == f"Part one\n{BODY}"
    assert (
        doc.read_text
        == f"Preface text before any heading, long enough to be kept as a chunk.\n\nPart one\n{BODY}"
    )
    assert "Dangling" not in doc.read_text


def test_a_document_of_headings_alone_gives_one_chunk_per_heading(officegen):
    body = officegen.p("Alpha", "Heading1") + officegen.p("Beta", "Heading2")
    doc, _ = parse(officegen.docx(body))
    assert [(s.heading, s.level, s.text) for s in doc.sections] == [
        ("Alpha", 1, "Alpha"),
        ("Beta", 2, "Beta"),
    ]


def test_tables_rows_merges_and_nesting(officegen):
    nested = officegen.tbl([["inner a", "inner b"], ["", ""]])
    table = officegen.tbl(
        [
            ["Region", "Revenue", "Notes"],
            [officegen.tc("North", vmerge="restart"), officegen.tc("Spans two", span=2)],
            [officegen.tc("hidden", vmerge="continue"), "120", "line one\nline two"],
            ["", "", ""],
            ["outer", officegen.tc(officegen.p("cell text") + nested), "tab\tinside"],
        ]
    )
    doc, _ = parse(officegen.docx(officegen.p("Figures", "Heading1") + table))
    section = doc.sections[0]
    lines = [
        "Region\tRevenue\tNotes",
        "North\tSpans two",
        "\t120\tline one line two",
        "outer\tcell text\ttab\tinside",
        "inner a\tinner b",
    ]
    assert section.text == "\n".join(lines)
    raw = section.text.encode()
    assert [raw[a:b].decode() for a, b in section.table_rows] == lines


def test_table_rows_survive_chunking_and_small_section_merge(officegen):
    body = "".join(
        [
            officegen.p("Overview", "Heading1"),
            officegen.p(BODY),
            officegen.p("Tiny", "Heading1"),
            officegen.tbl([["k", "v"]]),
        ]
    )
    doc, _ = parse(officegen.docx(body))
    chunks = SectionsChunker().chunk(doc, ChunkSettings(markdown=False))  # as the indexer sets it
    assert len(chunks) == 1
    assert chunks[0].content == f"{BODY}\n\nTiny\n\nk\tv"  # no Markdown "## " in a Word chunk
    raw = chunks[0].content.encode()
    assert [raw[a:b] for a, b in chunks[0].table_rows] == [b"k\tv"]


def test_core_properties_give_title_date_and_tags(officegen):
    core = officegen.core_xml("Annual plan", "2025-11-03T10:00:00Z", "plan, finance; q3 ,, ")
    doc, _ = parse(officegen.docx(officegen.p(BODY), core=core), "x/annual-plan_v2.docx")
    assert (doc.title, doc.date, doc.tags) == ("Annual plan", "2025-11-03", ("plan", "finance", "q3"))
    doc, _ = parse(officegen.docx(officegen.p(BODY)), "x/annual-plan_v2.docx")
    assert (doc.title, doc.date, doc.tags) == ("annual plan v2", None, ())


def test_damaged_document_keeps_text_before_the_damage(officegen):
    xml = officegen.document_xml(officegen.p(BODY) + officegen.p("second paragraph survives"))
    cut = xml[: xml.index("second paragraph survives") + 30]
    data = officegen.zip_parts({"word/document.xml": cut})
    doc, warnings = parse(data, "d.docx")
    assert BODY in doc.read_text
    assert warnings == ["d.docx: word/document.xml is damaged; text after the damage is missing"]


def test_real_python_docx_file(officegen):
    import io

    import docx

    d = docx.Document()
    d.core_properties.title = "Made by python-docx"
    d.add_heading("Inventory", 1)
    d.add_paragraph("The warehouse inventory is counted every quarter by two people.")
    table = d.add_table(rows=2, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text = "Item", "Count"
    table.cell(1, 0).text, table.cell(1, 1).text = "Pallet jack", "3"
    buf = io.BytesIO()
    d.save(buf)
    doc, _ = parse(buf.getvalue())
    assert doc.title == "Made by python-docx"
    assert doc.sections[0].heading == "Inventory"
    assert doc.sections[0].text.endswith("Item\tCount\nPallet jack\t3")


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"\xd0\xcf\x11\xe0" + b"\0" * 500, "not a readable zip archive"),
        (b"PK\x03\x04truncated", "not a readable zip archive"),
    ],
)
def test_not_a_zip(data, reason):
    with pytest.raises(ParseError, match=reason):
        parse(data)


def test_core_date_falls_back_to_modified_and_ignores_non_dates():
    from groove_office.ooxml import core_props
    from lxml import etree

    ns = (
        'xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" '
        'xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/"'
    )
    modified = etree.fromstring(
        f"<cp:coreProperties {ns}><dcterms:created>not a date</dcterms:created>"
        "<dcterms:modified>2024-02-29T23:59:59Z</dcterms:modified></cp:coreProperties>"
    )
    assert core_props(modified).date == "2024-02-29"
    assert core_props(None).title is None


def test_carriage_return_is_a_newline(officegen):
    xml = officegen.document_xml(
        "<w:p><w:r><w:t>first</w:t><w:cr/><w:t>second half of a long enough paragraph</w:t></w:r></w:p>"
    )
    doc, _ = parse(officegen.zip_parts({"word/document.xml": xml}))
    assert doc.sections[0].text == "first\nsecond half of a long enough paragraph"
