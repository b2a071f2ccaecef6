"""groove-office end to end with the real model: a Word table cell, slide notes and a spreadsheet
cell are found with their heading, slide or sheet; ``get_document`` reads each back."""

from __future__ import annotations

import io
from datetime import date

import docx


def _word() -> bytes:
    d = docx.Document()
    d.core_properties.title = "Fleet handbook"
    d.add_heading("Vehicles", 1)
    d.add_paragraph("Every vehicle in the fleet has a named owner who books its yearly service.")
    table = d.add_table(rows=3, cols=3)
    for r, row in enumerate(
        [
            ["Vehicle", "Owner", "Note"],
            ["Blue van", "Marta", "refrigerated cargo bay for the flower market"],
            ["Pickup", "Ilkka", "tow hitch rated for two tonnes"],
        ]
    ):
        for c, text in enumerate(row):
            table.cell(r, c).text = text
    buf = io.BytesIO()
    d.save(buf)
    return buf.getvalue()


def test_search_finds_table_cell_notes_and_sheet_cell_with_where_they_are(officegen, plugin_roundtrip):
    deck = officegen.pptx_deck(
        [
            {"title": "Quarterly review", "body": ["Revenue grew in every region."]},
            {
                "title": "Next steps",
                "body": ["Hire two engineers."],
                "notes": "Tell the board the bakery acquisition closes in May.",
            },
        ]
    )
    book = officegen.xlsx(
        {
            "Summary": [["Total", 10]],
            "Inventory": [["Item", "Count", "Checked"], ["Saxophone reeds", 240, date(2026, 2, 1)]],
        }
    )
    trip = plugin_roundtrip(
        {"fleet/handbook.docx": _word(), "talks/review.pptx": deck, "stock/music.xlsx": book},
        ["md", "docx", "xlsx", "pptx"],
    )
    assert trip.summary.skipped == 0 and trip.summary.updated == 3

    cell = trip.search("refrigerated cargo bay flower market").results[0]
    assert (cell.path, cell.heading, cell.title) == ("fleet/handbook.docx", "Vehicles", "Fleet handbook")
    raw = cell.content.encode()
    rows = [raw[a:b].decode() for a, b in cell.table_rows]
    assert "Blue van\tMarta\trefrigerated cargo bay for the flower market" in rows
    assert "table_rows" not in cell.as_dict()  # Python API only, never serialised

    notes = trip.search("bakery acquisition closes in May").results[0]
    assert (notes.path, notes.heading) == ("talks/review.pptx", "Slide 2: Next steps")
    assert "[notes]\nTell the board" in notes.content

    sheet = trip.search("saxophone reeds").results[0]
    assert (sheet.path, sheet.heading) == ("stock/music.xlsx", "Sheet: Inventory")
    assert "Saxophone reeds\t240\t2026-02-01" in sheet.content

    doc = trip.get_document("talks/review.pptx")
    assert doc["content"].startswith("Slide 1: Quarterly review\nQuarterly review\nRevenue grew")
    assert doc["truncated"] is False
    assert trip.get_document("stock/music.xlsx")["content"].startswith(
        "Sheet: Summary\nTotal\t10\n\nSheet: Inventory"
    )
    assert "refrigerated cargo bay" in trip.get_document("fleet/handbook.docx")["content"]


def test_reads_keep_their_own_budget_when_the_index_budget_is_raised(officegen, plugin_roundtrip):
    # R2.36: indexed under a raised [index].max_decompressed_size, refused by get_document's 50 MiB.
    big = officegen.bomb_member_docx(60)  # word/document.xml inflates to 60 MB
    trip = plugin_roundtrip(
        {"big/huge.docx": big, "notes.md": "# Notes\n\nA note beside a very large Word document."},
        ["md", "docx"],
        index={"max_decompressed_size": "100 MiB"},
    )
    assert trip.summary.skipped == 0
    answer = trip.get_document("big/huge.docx")
    assert answer["error"].startswith("Failed to read file: over the decompression budget: word/document.xml")
    assert "read-side 50 MiB decompression budget" in answer["error"]
    assert "max_decompressed_size" not in answer["error"]
