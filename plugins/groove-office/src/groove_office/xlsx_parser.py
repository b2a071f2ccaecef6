"""The ``.xlsx`` parser: one ``Sheet: <name>`` section per non-empty sheet (SPEC §3.8).

Before python-calamine sees the workbook, every entry of the zip is inflated once under the
decompression budget, images in ``xl/media`` included (R2.28, R3.41), and each worksheet's used
range is measured from its cell references: calamine allocates a sheet's whole grid at once, so a
sheet with one cell in A1 and one in XFD1048576 is refused by size instead of exhausting memory.
Rows become tab-joined lines of cached values (dates as ISO 8601, booleans ``TRUE``/``FALSE``),
trailing empty cells and empty rows dropped, each sheet capped at 1 MiB on a row boundary (R3.55).
"""

from __future__ import annotations

import io
import re
from datetime import date, datetime, time, timedelta
from typing import Any, ClassVar

from grooveseek import BudgetedZip, ParseContext, ParsedDocument, ParseError, Parser, Section, filename_title

from .ooxml import open_package, read_core, require

SHEET_CAP = 1_048_576
#: The largest grid (rows x columns of a sheet's used range) calamine is asked to allocate.
MAX_GRID_CELLS = 10_000_000
_CELL_REF = re.compile(rb"<(?:\w+:)?c\b[^>]*?\sr=\"([A-Z]{1,3})([0-9]{1,7})\"")


def _column(letters: bytes) -> int:
    n = 0
    for ch in letters:
        n = n * 26 + (ch - 64)
    return n


def grid_cells(sheet_xml: bytes) -> int:
    """The cell count of the bounding box of the sheet's referenced cells (0 when none)."""
    rows: list[int] = []
    cols: list[int] = []
    for match in _CELL_REF.finditer(sheet_xml):
        cols.append(_column(match.group(1)))
        rows.append(int(match.group(2)))
    if not rows:
        return 0
    return (max(rows) - min(rows) + 1) * (max(cols) - min(cols) + 1)


def _preflight(package: BudgetedZip) -> None:
    """R3.41 for .xlsx: every entry counted; worksheets measured against ``MAX_GRID_CELLS``."""
    package.check_declared()
    for name in package.names():
        if name.startswith("xl/worksheets/") and name.endswith(".xml"):
            cells = grid_cells(package.read(name) or b"")
            if cells > MAX_GRID_CELLS:
                raise ParseError(
                    f"{name} spans {cells} cells in its used range (limit {MAX_GRID_CELLS}); "
                    "reading it would allocate the whole grid at once"
                )
        else:
            package.drain(name)


def cell_text(value: Any) -> str:
    """R3.54: one cell's cached value as text."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    if isinstance(value, datetime):
        if value.time() == time(0):
            return value.date().isoformat()
        return value.isoformat()
    if isinstance(value, (date, time)):
        return value.isoformat()
    if isinstance(value, timedelta):
        return str(value)
    return str(value)


def sheet_text(rows: Any, name: str, rel: str, ctx: ParseContext) -> str:
    """Rows as lines, capped at 1 MiB: the row crossing the cap is kept whole, then the sheet stops."""
    lines: list[str] = []
    size = 0
    for row in rows:
        cells = [cell_text(v) for v in row]
        while cells and not cells[-1].strip():
            cells.pop()
        if not cells:
            continue
        line = "\t".join(cells)
        lines.append(line)
        size += len(line.encode("utf-8")) + 1
        if size > SHEET_CAP:
            ctx.warn(f"{rel}: sheet {name!r} truncated at 1 MiB; later rows are not indexed")
            break
    return "\n".join(lines)


class XlsxParser(Parser):
    """Parser ``xlsx``: sheets become chunks through the built-in ``pages`` chunker."""

    id: ClassVar[str] = "xlsx"
    kind: ClassVar[str] = "binary"
    media_type: ClassVar[str] = "text/plain"
    chunker: ClassVar[str] = "pages"
    policy_version: ClassVar[str] = "1"

    def parse(self, data: bytes, rel_path: str, ctx: ParseContext) -> ParsedDocument:
        return self._parse(data, rel_path, ctx, read=False)

    def parse_for_read(self, data: bytes, rel_path: str, ctx: ParseContext) -> ParsedDocument:
        return self._parse(data, rel_path, ctx, read=True)

    def _parse(self, data: bytes, rel_path: str, ctx: ParseContext, *, read: bool) -> ParsedDocument:
        from python_calamine import CalamineWorkbook

        package = open_package(data, ctx, read=read)
        require(package, "xl/workbook.xml", "an Excel workbook")
        _preflight(package)
        core = read_core(open_package(data, ctx, read=read), rel_path, ctx)
        try:
            book = CalamineWorkbook.from_filelike(io.BytesIO(data))
        except Exception as exc:  # noqa: BLE001 - calamine's errors all mean "not a readable workbook"
            raise ParseError(f"not a readable workbook: {type(exc).__name__}: {exc}") from None
        sections = []
        for name in book.sheet_names:
            rows = book.get_sheet_by_name(name).iter_rows()
            text = sheet_text(rows, name, rel_path, ctx)
            if text.strip():
                sections.append(Section(heading=f"Sheet: {name}", level=None, text=text))
        return ParsedDocument(
            sections=tuple(sections),
            read_text="\n\n".join(f"{s.heading}\n{s.text}" for s in sections),
            title=core.title or filename_title(rel_path) or None,
            date=core.date,
            tags=core.tags,
        )
