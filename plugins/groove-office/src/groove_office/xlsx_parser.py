"""The ``.xlsx`` parser: one ``Sheet: <name>`` section per non-empty sheet (SPEC §3.8, issue 21).

Before python-calamine sees the workbook, every entry of the zip is inflated once under the
decompression budget, images in ``xl/media`` included (R2.28, R3.41), and every XML part is
streamed through ``xlsx_grid``, which measures the grid calamine will allocate for each sheet; a
workbook whose sheets together pass ``grid_budget(len(file))`` is refused without starting
calamine. Calamine itself then runs only in an isolated child (``READER``, a
``grooveseek.IsolatedWorker`` with an address-space and time limit), so whatever it still does
wrong (an abort, a crash, a hang) is this file's named skip, never the caller's death.
"""

from __future__ import annotations

from typing import ClassVar

from grooveseek import (
    BudgetedZip,
    DecompressionBudget,
    IsolatedWorker,
    IsolationLimits,
    ParseContext,
    ParsedDocument,
    ParseError,
    Parser,
    Section,
    filename_title,
)

from .ooxml import open_package, read_core, refuse_dtd, require
from .xlsx_grid import (
    GRID_FLOOR,
    GRID_PER_BYTE,
    check_shared_strings,
    grid_budget,
    sheet_grids,
    sheet_parts,
    total_grid,
)
from .xlsx_read import read_sheets

SHEET_CAP = 1_048_576
#: The child's limits: room for calamine's grid at the largest budget a 50 MiB default allows is not
#: needed, because the preflight refuses that first; this cap only catches what the preflight misses.
LIMITS = IsolationLimits(memory_bytes=2 << 30, cpu_seconds=120, wall_seconds=120.0)
READER = IsolatedWorker("the xlsx reader (python-calamine)", LIMITS, preload=("python_calamine",))


def _preflight(package: BudgetedZip, size: int) -> None:
    """R3.41 and issue 21: every entry counted; the sheets' total grid measured against the budget."""
    package.check_declared()
    parts: dict[str, bytes] = {}
    for name in package.names():
        if name.endswith((".xml", ".rels")):
            data = package.read(name) or b""
            refuse_dtd(data, name)
            parts[name] = data
        else:
            package.drain(name)
    sheets = sheet_parts(parts)
    strings = f"{sheets.base}sharedStrings.xml".lower()
    for name in parts:
        if name.lower() == strings:  # calamine's lookup may ignore case
            check_shared_strings(parts[name], name)
    grids = sheet_grids(parts, sheets)
    total = total_grid(grids, sheets)
    budget = grid_budget(size)
    if total > budget:
        largest = max(grids, key=lambda n: grids[n])
        raise ParseError(
            f"the workbook's sheets span {total} cells (largest: {largest}, {grids[largest]} cells); "
            f"a {size}-byte workbook may span {budget} ({GRID_FLOOR} + {GRID_PER_BYTE} per byte): "
            "calamine allocates every cell of a sheet's used range at once"
        )


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
        package = open_package(data, ctx, read=read)
        require(package, "xl/workbook.xml", "an Excel workbook")
        _preflight(package, len(data))
        core = read_core(open_package(data, ctx, read=read), rel_path, ctx)
        budget = DecompressionBudget.for_context(ctx, read=read)
        sheets, warnings = READER.call(read_sheets, data, SHEET_CAP, budget.limit, budget.name)
        for message in warnings:
            ctx.warn(f"{rel_path}: {message}")
        sections = tuple(
            Section(heading=f"Sheet: {name}", level=None, text=text) for name, text in sheets if text.strip()
        )
        return ParsedDocument(
            sections=sections,
            read_text="\n\n".join(f"{s.heading}\n{s.text}" for s in sections),
            title=core.title or filename_title(rel_path) or None,
            date=core.date,
            tags=core.tags,
        )
