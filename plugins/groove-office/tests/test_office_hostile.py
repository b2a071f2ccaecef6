"""Hostile Office files (issue 12's hostile set): each is skipped with a named reason, the run goes on.

Every file is generated here and is small on disk: the bombs are a few KB to a few hundred KB of
Deflate. Peak memory is measured by ``bench/bench_documents.py``, not here (no timed tests).
"""

from __future__ import annotations

import pytest
from groove_office.docx_parser import DocxParser
from groove_office.xlsx_parser import XlsxParser

from grooveseek import ParseError
from grooveseek.testing import recording_parse_context

BODY = "The office move happens in March; every team packs its own desks and labels the boxes."


def test_billion_laughs_is_refused_without_expanding(officegen):
    data = officegen.billion_laughs_docx()
    assert len(data) < 2_000
    with pytest.raises(ParseError, match="declares a DTD with entities"):
        DocxParser().parse(data, "laughs.docx", recording_parse_context())


def test_high_ratio_member_is_refused_before_inflating(officegen):
    data = officegen.bomb_member_docx(60)  # 60 MB of XML in about 60 KB
    assert len(data) < 200_000
    with pytest.raises(ParseError) as info:
        DocxParser().parse(data, "bomb.docx", recording_parse_context())
    assert str(info.value).startswith(
        "over the decompression budget: word/document.xml inflates past 52428800"
    )


def test_nested_zip_bomb_is_never_opened(officegen):
    data = officegen.nested_zip_bomb()
    with pytest.raises(ParseError, match=r"package has no xl/workbook\.xml"):
        XlsxParser().parse(data, "42.xlsx", recording_parse_context())


def test_hostile_office_files_are_skipped_by_name_and_the_rest_indexes(officegen, plugin_roundtrip):
    good = officegen.docx(officegen.p("Moving day", "Heading1") + officegen.p(BODY))
    trip = plugin_roundtrip(
        {
            "notes/readme.md": "# Notes\n\nThe move plan is in the Word document beside this note.\n",
            "office/move.docx": good,
            "hostile/laughs.docx": officegen.billion_laughs_docx(),
            "hostile/bomb.docx": officegen.bomb_member_docx(60),
            "hostile/42.xlsx": officegen.nested_zip_bomb(),
            "hostile/42.docx": officegen.nested_zip_bomb(),
            "hostile/truncated.docx": good[: len(good) // 2],
            "hostile/encrypted.pptx": b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 4000,
            "hostile/media-heavy.xlsx": officegen.xlsx({"S": [["tiny"]]}, image=officegen.PIXEL_PNG * 40_000),
        },
        ["md", "docx", "xlsx", "pptx"],
        index={"max_decompressed_size": "2 MiB"},
    )
    assert trip.summary.updated == 2
    count, skips = trip.skipped()
    reasons = dict(skips)
    assert count == 7 == trip.summary.skipped
    assert "declares a DTD" in reasons["hostile/laughs.docx"]
    for rel in ("hostile/bomb.docx", "hostile/media-heavy.xlsx"):
        assert reasons[rel].startswith("over the decompression budget"), reasons[rel]
        assert "[index].max_decompressed_size" in reasons[rel]
    assert "no xl/workbook.xml" in reasons["hostile/42.xlsx"]
    assert "no word/document.xml" in reasons["hostile/42.docx"]
    assert reasons["hostile/truncated.docx"].startswith("not a readable zip archive")
    assert reasons["hostile/encrypted.pptx"].startswith("not a readable zip archive")
    hit = trip.search("who packs the desks and labels the boxes").results[0]
    assert (hit.path, hit.heading) == ("office/move.docx", "Moving day")


def test_a_flood_of_empty_elements_is_refused_by_the_element_budget():
    from groove_office.ooxml import ELEMENT_FLOOR, ELEMENTS_PER_BYTE

    from tests.hostile_office import empty_paragraphs_docx

    data = empty_paragraphs_docx()  # 1.4M empty paragraphs in about 13 KB
    assert len(data) < 20_000
    with pytest.raises(ParseError) as info:
        DocxParser().parse(data, "flood.docx", recording_parse_context())
    limit = ELEMENT_FLOOR + ELEMENTS_PER_BYTE * len(data)
    assert str(info.value) == (
        f"too many XML elements: word/document.xml brings the package to 1400002 (a {len(data)}-byte "
        f"file may hold {limit}: {ELEMENT_FLOOR} + {ELEMENTS_PER_BYTE} per byte), so reading it would "
        "cost far more than the file's size"
    )
    doc = DocxParser().parse(empty_paragraphs_docx(20_000), "fine.docx", recording_parse_context())
    assert doc.sections == ()
