"""The part of the ``.xlsx`` parser that runs in the isolated child: calamine and the rows (R3.54, R3.55).

``read_sheets`` is sent to ``grooveseek.IsolatedWorker`` by ``xlsx_parser``: python-calamine is
native code that aborts the process when an allocation fails, so it never runs in the indexer or
the server. It returns plain data (sheet names with their text, warnings) so the answer crosses
the process boundary cheaply. Rows become tab-joined lines of cached values (dates as ISO 8601,
booleans ``TRUE``/``FALSE``), trailing empty cells and empty rows dropped, each sheet capped at
``cap`` bytes on a row boundary; the text kept counts against the decompression budget (R2.28).
"""

from __future__ import annotations

import io
from datetime import date, datetime, time, timedelta
from typing import Any

from grooveseek import DecompressionBudget, ParseError


def cell_text(value: Any) -> str:
    """R3.54: one cell's cached value as text."""
    if value is None or value == "":
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


def sheet_text(rows: Any, name: str, cap: int, warnings: list[str]) -> str:
    """Rows as lines, capped at ``cap`` bytes: the row crossing the cap is kept whole, then it stops."""
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
        if size > cap:
            warnings.append(f"sheet {name!r} truncated at 1 MiB; later rows are not indexed")
            break
    return "\n".join(lines)


def read_sheets(
    data: bytes, cap: int, budget_limit: int, budget_name: str
) -> tuple[list[tuple[str, str]], list[str]]:
    """Every sheet's name and text, in workbook order, and the warnings (without the file's name)."""
    from python_calamine import CalamineWorkbook

    budget = DecompressionBudget(budget_limit, budget_name)
    try:
        book = CalamineWorkbook.from_filelike(io.BytesIO(data))
    except Exception as exc:  # noqa: BLE001 - calamine's errors all mean "not a readable workbook"
        raise ParseError(f"not a readable workbook: {type(exc).__name__}: {exc}") from None
    sheets: list[tuple[str, str]] = []
    warnings: list[str] = []
    for name in book.sheet_names:
        try:
            rows = book.get_sheet_by_name(name).iter_rows()
        except Exception as exc:  # noqa: BLE001 - one unreadable sheet is the workbook's failure
            raise ParseError(f"sheet {name!r} is not readable: {type(exc).__name__}: {exc}") from None
        text = sheet_text(rows, name, cap, warnings)
        budget.take(len(text.encode("utf-8")), "the workbook's cell text")
        sheets.append((name, text))
    return sheets, warnings
