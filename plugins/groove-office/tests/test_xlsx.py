"""The .xlsx parser's rules (SPEC §3.8), on workbooks written by XlsxWriter in the test."""

from __future__ import annotations

from datetime import date, datetime

import pytest
from groove_office import xlsx_parser
from groove_office.xlsx_grid import measure_part
from groove_office.xlsx_parser import XlsxParser
from groove_office.xlsx_read import cell_text

from grooveseek import ParseError
from grooveseek.testing import check_parser, recording_parse_context


def parse(data: bytes, rel: str = "fin/budget.xlsx", **limits):
    ctx = recording_parse_context(**limits)
    return XlsxParser().parse(data, rel, ctx), ctx.warnings


def test_contract(officegen):
    check_parser(XlsxParser(), officegen.xlsx({"S": [["a", 1]]}), "a/b.xlsx", garbage=b"garbage bytes")


def test_one_section_per_non_empty_sheet_in_workbook_order(officegen):
    data = officegen.xlsx(
        {
            "Costs": [
                ["Item", "Cost", "Paid", "Due"],
                ["Laptop", 1200, True, date(2026, 3, 4)],
                [None],
                ["Desk", 249.5, False],
            ],
            "Empty": [],
            "Notes": [["first"], [None, None, "late column", None, None]],
        },
        title="Budget 2026",
    )
    doc, warnings = parse(data)
    assert warnings == []
    assert [s.heading for s in doc.sections] == ["Sheet: Costs", "Sheet: Notes"]
    assert doc.sections[0].text == "Item\tCost\tPaid\tDue\nLaptop\t1200\tTRUE\t2026-03-04\nDesk\t249.5\tFALSE"
    assert doc.sections[1].text == "first\n\t\tlate column"  # leading empties kept, trailing dropped
    assert (
        doc.read_text == "Sheet: Costs\n" + doc.sections[0].text + "\n\nSheet: Notes\nfirst\n\t\tlate column"
    )
    assert (doc.title, doc.tags) == ("Budget 2026", ("budget", "2026"))


def test_cell_rendering():
    assert cell_text(datetime(2026, 1, 2)) == "2026-01-02"
    assert cell_text(datetime(2026, 1, 2, 9, 30)) == "2026-01-02T09:30:00"
    assert cell_text(3.0) == "3"
    assert cell_text(0.1) == "0.1"
    assert cell_text(True) == "TRUE"
    assert cell_text("") == ""


def test_sheet_cap_is_row_aligned_with_a_warning(officegen, monkeypatch):
    monkeypatch.setattr(xlsx_parser, "SHEET_CAP", 100)
    rows = [[f"row {i}", "x" * 30] for i in range(10)]
    doc, warnings = parse(officegen.xlsx({"Big": rows, "Small": [["ok"]]}), "w.xlsx")
    lines = doc.sections[0].text.split("\n")
    assert lines == [f"row {i}\t{'x' * 30}" for i in range(3)]  # the row crossing 100 bytes is kept
    assert warnings == ["w.xlsx: sheet 'Big' truncated at 1 MiB; later rows are not indexed"]
    assert doc.sections[1].text == "ok"


def test_every_entry_counts_against_the_budget_images_included(officegen):
    data = officegen.xlsx({"S": [["tiny"]]}, image=officegen.PIXEL_PNG * 400)  # ~27 KB of "image"
    with pytest.raises(ParseError, match=r"over the decompression budget.*\[index\]\.max_decompressed_size"):
        parse(data, max_decompressed_size=20_000)
    doc, _ = parse(data, max_decompressed_size=200_000)
    assert doc.sections[0].text == "tiny"


def test_a_sparse_sheet_spanning_the_whole_grid_is_refused(officegen):
    data = officegen.xlsx({"S": [["corner"]]})
    # Move a second cell to the far corner of the grid: calamine would allocate every cell between.
    import io
    import zipfile

    src = zipfile.ZipFile(io.BytesIO(data))
    parts = {i.filename: src.read(i.filename) for i in src.infolist()}
    sheet = parts["xl/worksheets/sheet1.xml"].decode()
    far = '<row r="1048576"><c r="XFD1048576" t="inlineStr"><is><t>far</t></is></c></row>'
    parts["xl/worksheets/sheet1.xml"] = sheet.replace("</sheetData>", far + "</sheetData>").encode()
    with pytest.raises(ParseError, match="span 17179869184 cells"):
        parse(officegen.zip_parts(parts))


def test_grid_measure():
    def grid(cells: str) -> int:
        return measure_part(f"<worksheet><sheetData>{cells}</sheetData></worksheet>".encode(), "s.xml")

    assert grid('<row><c r="B2"><v>1</v></c><c r="D5"><v>2</v></c></row>') == 12
    # a cell with no value is not in the grid
    assert grid('<row><c r="B2"><v>1</v></c><c r="Z99"/></row>') == 1
    assert grid("") == 0


def test_not_a_workbook(officegen):
    with pytest.raises(ParseError, match=r"^not an Excel workbook: the package has no xl/workbook\.xml"):
        parse(officegen.zip_parts({"hello.txt": "hi"}))
