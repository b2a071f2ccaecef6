"""Hostile workbooks (issue 21): refused by the grid preflight before calamine runs; whatever gets
past it runs in the isolated child, whose abort is a named skip; the budget sums every sheet.

The workbooks are built byte by byte in ``tests/hostile_office.py``, each about 1.4 KB. Before
issue 21 each of the first six aborted the process (SIGABRT) and the next two were indexed at the
cost of every cell of their grids.
"""

from __future__ import annotations

import io
import zipfile

import pytest
from groove_office import xlsx_parser
from groove_office.xlsx_grid import GRID_FLOOR, GRID_PER_BYTE, grid_budget, measure_part
from groove_office.xlsx_parser import XlsxParser

from grooveseek import IsolationFailure, ParseError
from grooveseek.testing import recording_parse_context
from tests.hostile_office import BENIGN, XLSX_HOSTILE, XLSX_REASONS, cell, workbook


@pytest.fixture
def no_calamine(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("calamine was started for a workbook the preflight should refuse")

    monkeypatch.setattr(xlsx_parser.READER, "call", refuse)


@pytest.mark.parametrize("name", sorted(XLSX_HOSTILE))
@pytest.mark.parametrize("read", [False, True], ids=["parse", "parse_for_read"])
def test_each_hostile_workbook_is_refused_before_calamine_runs(name, read, no_calamine):
    parser = XlsxParser()
    method = parser.parse_for_read if read else parser.parse
    with pytest.raises(ParseError) as info:
        method(XLSX_HOSTILE[name], f"hostile/{name}", recording_parse_context())
    assert XLSX_REASONS[name] in str(info.value)


def test_the_refusal_names_the_total_the_largest_sheet_and_the_rule():
    data = XLSX_HOSTILE["xlsx-eight-sheets.xlsx"]
    with pytest.raises(ParseError) as info:
        XlsxParser().parse(data, "w.xlsx", recording_parse_context())
    assert str(info.value) == (
        f"the workbook's sheets span 31200000 cells (largest: xl/worksheets/sheet1.xml, 3900000 cells); "
        f"a {len(data)}-byte workbook may span {GRID_FLOOR + GRID_PER_BYTE * len(data)} "
        f"({GRID_FLOOR} + {GRID_PER_BYTE} per byte): "
        "calamine allocates every cell of a sheet's used range at once"
    )


def test_a_huge_dimension_with_one_cell_still_indexes():
    doc = XlsxParser().parse(BENIGN["xlsx-huge-dimension.xlsx"], "ok.xlsx", recording_parse_context())
    assert [s.text for s in doc.sections] == ["quarterly ledger of the orchard"]


def test_the_budget_grows_with_the_file():
    assert grid_budget(0) == GRID_FLOOR and grid_budget(1000) == GRID_FLOOR + 1000 * GRID_PER_BYTE
    span = f'<row r="1">{cell("A1", "a")}</row><row r="100000">{cell("AN100000", "b")}</row>'  # 4,000,000
    assert measure_part(f"<worksheet><sheetData>{span}</sheetData></worksheet>".encode(), "s") == 4_000_000
    doc = XlsxParser().parse(workbook([span]), "fits.xlsx", recording_parse_context())
    assert doc.sections[0].text.startswith("a\n") and doc.sections[0].text.endswith("\tb")
    with pytest.raises(ParseError, match="span 8000000 cells"):
        XlsxParser().parse(workbook([span, span]), "two.xlsx", recording_parse_context())


SMALL_SHEETS = {
    "quoted": "<row r='2'><c r='B2' t='inlineStr'><is><t>x</t></is></c><c r='D5'><v>1</v></c></row>",
    "spaced": '<row r = "3"><c r = "C3"><v>1</v></c><c  r="E9" ><v>2</v></c></row>',
    "lowercase": '<row><c r="b2"><v>1</v></c><c r="f4"><v>2</v></c></row>',
    "no-r": "<row><c><v>1</v></c><c></c><c/><c><v>2</v></c></row><row><c/><c><v>3</v></c></row>",
    "rows-without-r": '<row r="3"><c><v>1</v></c></row><row/><row><c></c><c></c><c><v>2</v></c></row>',
    "mixed": '<row r="4"><c r="C4"><v>1</v></c><c><v>2</v></c><c/><c><v>3</v></c></row>'
    "<row><c><v>4</v></c></row>",
    "empty-cells-ignored": '<row r="1"><c r="A1"><v>1</v></c><c r="Z99" s="1"/><c r="Y50"></c></row>',
    "formula-only": '<row r="1"><c r="A1"><v>1</v></c><c r="C7"><f>1+1</f></c></row>',
    "prefixed": '<x:row xmlns:x="urn:x" r="2"><x:c r="B2"><x:v>1</x:v></x:c>'
    '<x:c r="C6"><x:v>2</x:v></x:c></x:row>',
}


@pytest.mark.parametrize("name", sorted(SMALL_SHEETS))
def test_the_preflight_measures_at_least_what_calamine_allocates(name):
    """On small sheets calamine is safe to run here: its grid must not exceed the measured one."""
    from python_calamine import CalamineWorkbook

    data = workbook([SMALL_SHEETS[name]])
    sheet = CalamineWorkbook.from_filelike(io.BytesIO(data)).get_sheet_by_name("S0")
    measured = measure_part(
        f"<worksheet><sheetData>{SMALL_SHEETS[name]}</sheetData></worksheet>".encode(), "s"
    )
    if name == "formula-only":  # a formula without a cached value: counted, calamine leaves it out
        assert (sheet.height * sheet.width, measured) == (1, 21)
    else:
        assert sheet.height * sheet.width == measured


def test_a_calamine_abort_is_a_named_skip_and_the_next_workbook_parses(monkeypatch):
    monkeypatch.setattr(xlsx_parser, "grid_budget", lambda size: 10**15)  # let the hostile file through
    parser = XlsxParser()
    for read in (False, True):
        method = parser.parse_for_read if read else parser.parse
        with pytest.raises(IsolationFailure) as info:
            method(XLSX_HOSTILE["xlsx-quoted-far.xlsx"], "far.xlsx", recording_parse_context())
        assert str(info.value).startswith(
            "the xlsx reader (python-calamine) went over its memory limit of 2048 MiB "
            "(was killed by signal 6 (SIGABRT)): memory allocation of"
        ), str(info.value)
        doc = parser.parse(BENIGN["xlsx-huge-dimension.xlsx"], "ok.xlsx", recording_parse_context())
        assert doc.sections[0].text == "quarterly ledger of the orchard"


def test_a_sheet_whose_part_cannot_be_resolved_counts_as_the_largest_part(officegen):
    span = f'<row r="1">{cell("A1", "a")}</row><row r="300000">{cell("J300000", "b")}</row>'  # 3,000,000
    src = zipfile.ZipFile(io.BytesIO(workbook([span, f'<row r="1">{cell("A1", "small")}</row>'])))
    parts = {i.filename: src.read(i.filename) for i in src.infolist()}
    # The second sheet's relationship now points at a part spelled differently from any entry.
    rels = "xl/_rels/workbook.xml.rels"
    parts[rels] = parts[rels].replace(b'Target="worksheets/sheet2.xml"', b'Target="Worksheets/Sheet1.xml"')
    with pytest.raises(ParseError, match="span 6000000 cells"):
        XlsxParser().parse(officegen.zip_parts(parts), "w.xlsx", recording_parse_context())


def _calamine_ref(ref: str, need_column: bool):
    """calamine's get_row_and_optional_column, transcribed: letters, then digits, u32 wrapping."""
    col = row = 0
    digits = False
    for ch in ref:
        if not digits and ch.isascii() and ch.isalpha():
            col = (col * 26 + ord(ch.upper()) - 64) & 0xFFFFFFFF
        elif ch.isascii() and ch.isdigit():
            row, digits = (row * 10 + ord(ch) - 48) & 0xFFFFFFFF, True
        else:
            return "bad"
    if row == 0 or (need_column and col == 0):
        return "bad"
    return row - 1, (col - 1 if col else None)


def test_cell_references_are_read_as_calamine_reads_them():
    import random

    from groove_office.xlsx_grid import row_col

    rng = random.Random(21)
    refs = ["A1", "XFD1048576", "xfd1048576", "A4294967297", "AZ99999999", "A0", "1", "A", "AAAA1", "A1B"]
    refs += [
        "".join(rng.choice("AZaz0") for _ in range(rng.randint(0, 4)))
        + "".join(rng.choice("0123456789") for _ in range(rng.randint(0, 11)))
        for _ in range(5000)
    ]
    for ref in refs:
        for need in (True, False):
            try:
                got = row_col(ref, need_column=need)
            except Exception:
                got = "bad"
            assert got == _calamine_ref(ref, need), (ref, need)
