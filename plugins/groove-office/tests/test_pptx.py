"""The .pptx parser's rules (SPEC §3.9, §3.10), on decks written by python-pptx in the test."""

from __future__ import annotations

import io
import zipfile

import pytest
from groove_office.pptx_parser import PptxParser

from grooveseek.testing import check_parser, recording_parse_context


def parse(data: bytes, rel: str = "talks/deck.pptx", **limits):
    ctx = recording_parse_context(**limits)
    return PptxParser().parse(data, rel, ctx), ctx.warnings


def test_contract(officegen):
    data = officegen.pptx_deck([{"title": "Hello", "body": ["world"]}])
    check_parser(PptxParser(), data, "a/b.pptx", garbage=b"garbage")


def test_slides_titles_text_groups_tables_and_notes(officegen):
    deck = officegen.pptx_deck(
        [
            {
                "title": "Roadmap\vfor 2026",
                "body": ["First point", "Second\vpoint"],
                "notes": "Mention the launch.",
            },
            {"title": None, "group": ["grouped one", "grouped two"]},
            {"title": None},  # no text, no notes: no section
            {
                "title": "Numbers",
                "body": [],
                "table": [["a", "b", "c"], ["d", "e", "f"], ["g", "h", "i"]],
                "merge": [(0, 0, 0, 1), (1, 2, 2, 2)],
                "hidden": [(0, 1, "invisible left"), (2, 2, "invisible below")],
            },
        ],
        title="Planning deck",
    )
    doc, _ = parse(deck)
    assert [s.heading for s in doc.sections] == ["Slide 1: Roadmap for 2026", "Slide 2", "Slide 4: Numbers"]
    assert (
        doc.sections[0].text
        == "Roadmap\nfor 2026\nFirst point\nSecond\npoint\n\n[notes]\nMention the launch."
    )
    assert doc.sections[1].text == "grouped one\ngrouped two"
    table = doc.sections[2]
    # (0,0)-(0,1) merged (python-pptx moves "b" into the origin): written once; (2,2) covered from
    # above: an empty field. Text left in covered cells is not indexed.
    assert table.text == "Numbers\na b\tc\nd\te\tf i\ng\th\t"
    raw = table.text.encode()
    assert [raw[a:b].decode() for a, b in table.table_rows] == ["a b\tc", "d\te\tf i", "g\th\t"]
    assert "invisible" not in doc.read_text
    assert doc.title == "Planning deck"
    assert doc.read_text.startswith("Slide 1: Roadmap for 2026\nRoadmap\nfor 2026")


def test_notes_follow_the_slides_own_relationship(officegen):
    deck = officegen.pptx_deck(
        [
            {"title": "One", "body": ["first"]},
            {"title": "Two", "body": ["second"], "notes": "Only two has notes."},
        ]
    )
    doc, _ = parse(deck)
    assert "[notes]" not in doc.sections[0].text
    assert doc.sections[1].text.endswith("[notes]\nOnly two has notes.")
    # Rename the notes part: a same-number guess would now miss it, the relationship still finds it.
    src = zipfile.ZipFile(io.BytesIO(deck))
    parts = {i.filename: src.read(i.filename) for i in src.infolist()}
    old = next(n for n in parts if n.startswith("ppt/notesSlides/notesSlide") and n.endswith(".xml"))
    parts["ppt/notesSlides/renamedNotes.xml"] = parts.pop(old)
    rels_old = old.replace("notesSlides/", "notesSlides/_rels/") + ".rels"
    parts["ppt/notesSlides/_rels/renamedNotes.xml.rels"] = parts.pop(rels_old)
    base = old.rsplit("/", 1)[1]
    for name in list(parts):
        if name.endswith(".rels") or name == "[Content_Types].xml":
            parts[name] = parts[name].replace(base.encode(), b"renamedNotes.xml")
    doc, _ = parse(officegen.zip_parts(parts))
    assert doc.sections[1].text.endswith("[notes]\nOnly two has notes.")
    assert "[notes]" not in doc.sections[0].text


def test_media_is_never_inflated(officegen):
    deck = officegen.pptx_deck([{"title": "Pictures", "body": ["a slide with a big picture"]}])
    src = zipfile.ZipFile(io.BytesIO(deck))
    parts = {i.filename: src.read(i.filename) for i in src.infolist()}
    parts["ppt/media/image99.png"] = b"\0" * 2_000_000  # inflates far past the budget below
    data = officegen.zip_parts(parts)
    doc, _ = parse(data, max_decompressed_size=500_000)
    assert doc.sections[0].heading == "Slide 1: Pictures"


def test_damaged_slide_keeps_the_text_before_the_damage(officegen):
    deck = officegen.pptx_deck([{"title": "Intact title", "body": ["first point", "second point"]}])
    src = zipfile.ZipFile(io.BytesIO(deck))
    parts = {i.filename: src.read(i.filename) for i in src.infolist()}
    slide = parts["ppt/slides/slide1.xml"]
    parts["ppt/slides/slide1.xml"] = slide[: slide.index(b"second point") + 3]
    doc, warnings = parse(officegen.zip_parts(parts), "d.pptx")
    assert "first point" in doc.sections[0].text
    assert warnings == ["d.pptx: ppt/slides/slide1.xml is damaged; text after the damage is missing"]


def test_entity_declarations_in_any_part_are_refused(officegen):
    import pytest

    from grooveseek import ParseError

    deck = officegen.pptx_deck([{"title": "T", "body": ["b"]}])
    src = zipfile.ZipFile(io.BytesIO(deck))
    parts = {i.filename: src.read(i.filename) for i in src.infolist()}
    parts["ppt/presentation.xml"] = (
        b'<?xml version="1.0"?><!DOCTYPE p [<!ENTITY a "aaaa">]>'
        + parts["ppt/presentation.xml"].split(b"?>", 1)[1]
    )
    with pytest.raises(ParseError, match=r"ppt/presentation\.xml declares a DTD"):
        parse(officegen.zip_parts(parts))


def test_a_shape_python_pptx_cannot_read_costs_that_shape_only():
    from tests.hostile_office import odd_shape_pptx

    ctx = recording_parse_context()
    doc = PptxParser().parse(odd_shape_pptx(), "deck.pptx", ctx)
    assert [s.text for s in doc.sections] == ["the greenhouse vents open at noon"]
    assert ctx.warnings == [
        "deck.pptx: slide 1: shape 'Table 2' (id 3) skipped: InvalidXmlError: value must be one of "
        "'1', '0', 'true' or 'false', got 'maybe'"
    ]


def test_a_shape_of_a_type_python_pptx_does_not_classify_keeps_its_text(officegen):
    import io

    from pptx import Presentation

    deck = Presentation(io.BytesIO(officegen.pptx_deck([{"title": "Plan", "body": ["first step"]}])))
    box = deck.slides[0].shapes.add_textbox(0, 0, 100, 100)
    box.text_frame.text = "unclassified shape text"
    sp = box._element
    del sp.nvSpPr.cNvSpPr.attrib["txBox"]  # no txBox, no geometry: shape_type raises NotImplementedError
    sp.spPr.remove(sp.spPr.find("{http://schemas.openxmlformats.org/drawingml/2006/main}prstGeom"))
    with pytest.raises(NotImplementedError):
        _ = box.shape_type
    out = io.BytesIO()
    deck.save(out)
    ctx = recording_parse_context()
    doc = PptxParser().parse(out.getvalue(), "deck.pptx", ctx)
    assert doc.sections[0].text == "Plan\nfirst step\nunclassified shape text"
    assert ctx.warnings == []
