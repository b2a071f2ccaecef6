"""What python-calamine will allocate for a workbook, measured before it runs (SPEC R3.41, issue 21).

Calamine builds each sheet it reads as one dense grid: every cell of the bounding box of the
sheet's non-empty cells, 32 bytes each, allocated at once; a failed allocation aborts the process.
So each XML part is read here with a real XML parser (expat, streaming, no tree) the way calamine
reads it: ``row``/``c`` matched by local name whatever the prefix, ``r`` read in any quoting and
spacing, a cell without ``r`` placed after the previous cell (a row without ``r`` after the previous
row), references computed with calamine's 32-bit wrapping arithmetic, and a cell counted when it
holds any child element (a value, an inline string or a formula). A sheet's grid is its bounding
box; the workbook's total is the sum over the sheets ``xl/workbook.xml`` lists (a part listed twice
counts twice; a listed part this reader cannot find counts as the largest grid in the file).

The total must stay within ``grid_budget(len(file))``: ``GRID_FLOOR`` cells plus ``GRID_PER_BYTE``
cells per byte of the file, so work and memory stay linear in the file's size. The shared-strings
table's ``uniqueCount`` (which calamine reserves up front) must not exceed one string per
``SST_BYTES_PER_STRING`` bytes of the part.
"""

from __future__ import annotations

import re
import xml.parsers.expat

import attrs

from grooveseek import ParseError

#: Grid cells every workbook may span, whatever its size.
GRID_FLOOR = 4_000_000
#: Grid cells each byte of the file adds to the budget.
GRID_PER_BYTE = 16
#: The fewest bytes one shared string takes in ``xl/sharedStrings.xml`` (``<si><t/></si>`` is 12).
SST_BYTES_PER_STRING = 8
_U32 = 0xFFFFFFFF
_PLAIN = re.compile(r"([A-Za-z]{0,3})([0-9]{1,7})")
_COLUMNS: dict[str, int] = {}  # column letters -> 1-based number, filled as references are read
_FEED = 1 << 16


def grid_budget(file_size: int) -> int:
    """The most grid cells a workbook of ``file_size`` bytes may make calamine allocate."""
    return GRID_FLOOR + GRID_PER_BYTE * file_size


class _BadRef(Exception):
    pass


class _Done(Exception):
    pass


def _local(tag: str) -> str:
    return tag.rpartition(":")[2]


def row_col(ref: str, *, need_column: bool) -> tuple[int, int | None]:
    """Calamine's reading of ``B12``: 0-based (row, column), u32 arithmetic wrapping as in Rust."""
    plain = _PLAIN.fullmatch(ref)
    if plain is not None:  # at most 3 letters and 7 digits: nothing can wrap
        letters, digits = plain.group(1, 2)
        col = _COLUMNS.get(letters)
        if col is None:
            col = _COLUMNS[letters] = sum(
                (ord(ch) - 64) * 26**i for i, ch in enumerate(reversed(letters.upper()))
            )
        row = int(digits)
        if row and (col or not need_column):
            return row - 1, (col - 1 if col else None)
    col = row = 0
    digits = False
    for ch in ref:
        if not digits and ("A" <= ch <= "Z" or "a" <= ch <= "z"):
            col = (col * 26 + (ord(ch.upper()) - 64)) & _U32
        elif "0" <= ch <= "9":
            row = (row * 10 + ord(ch) - 48) & _U32
            digits = True
        else:
            raise _BadRef(ref)
    if row == 0 or (need_column and col == 0):
        raise _BadRef(ref)
    return row - 1, (col - 1 if col else None)


_FAR = 1 << 40  # beyond any u32 position: an empty bounding box


class _SheetWalk:
    """expat callbacks replaying calamine's cell positions over one part (kept lean: they run for
    every element of every sheet)."""

    def __init__(self) -> None:
        self.in_data = False
        self.in_cell = False  # until the cell's first closing ``c``
        self.valued = False
        self.pos = (0, 0)
        self.row = 0
        self.col = 0
        self.r0 = self.c0 = _FAR
        self.r1 = self.c1 = -1
        self.names: dict[str, str] = {}

    def _name(self, tag: str) -> str:
        name = self.names.get(tag)
        if name is None:
            name = self.names[tag] = _local(tag)
        return name

    def start(self, tag: str, attrs_: dict[str, str]) -> None:
        if self.in_cell:
            self.valued = True
            return
        name = self._name(tag)
        if not self.in_data:
            self.in_data = name == "sheetData"
        elif name == "c":
            ref = attrs_.get("r")
            if ref is not None:
                row, col = row_col(ref, need_column=True)
                self.col = col or 0
                self.pos = (row, self.col)
            else:
                self.pos = (self.row, self.col)
            self.in_cell, self.valued = True, False
        elif name == "row":
            ref = attrs_.get("r")
            if ref is not None:
                self.row = row_col(ref, need_column=False)[0]

    def end(self, tag: str) -> None:
        name = self._name(tag)
        if self.in_cell:
            if name == "c":
                self.in_cell = False
                self.col = (self.col + 1) & _U32
                if self.valued:
                    self._take(*self.pos)
        elif not self.in_data:
            return
        elif name == "row":
            self.row, self.col = (self.row + 1) & _U32, 0
        elif name == "sheetData":
            raise _Done

    def _take(self, row: int, col: int) -> None:
        if row < self.r0:
            self.r0 = row
        if row > self.r1:
            self.r1 = row
        if col < self.c0:
            self.c0 = col
        if col > self.c1:
            self.c1 = col

    @property
    def grid(self) -> int:
        if self.r1 < 0:
            return 0
        return (self.r1 - self.r0 + 1) * (self.c1 - self.c0 + 1)


def _walk(data: bytes, part: str, walk: object) -> None:
    parser = xml.parsers.expat.ParserCreate()
    parser.StartElementHandler = getattr(walk, "start", None)
    parser.EndElementHandler = getattr(walk, "end", None)
    try:
        for at in range(0, len(data), _FEED):
            parser.Parse(data[at : at + _FEED], False)
        parser.Parse(b"", True)
    except _Done:
        return
    except _BadRef as exc:
        raise ParseError(f"{part}: cell reference {str(exc)[:40]!r} is not valid") from None
    except xml.parsers.expat.ExpatError as exc:
        raise ParseError(f"{part} is not well-formed XML ({exc})") from None


def measure_part(data: bytes, part: str) -> int:
    """The grid calamine would allocate reading this part as a sheet (0 without a non-empty cell)."""
    walk = _SheetWalk()
    _walk(data, part, walk)
    return walk.grid


@attrs.define
class _Root:
    """The root element's ``uniqueCount`` (a shared-strings table's declared size)."""

    count: int | None = None

    def start(self, tag: str, attrs_: dict[str, str]) -> None:
        if _local(tag) == "sst":
            value = attrs_.get("uniqueCount", "")
            self.count = int(value) if value.isascii() and value.isdigit() else None
        raise _Done


def check_shared_strings(data: bytes, part: str) -> None:
    """Refuse a table whose ``uniqueCount`` (reserved up front) exceeds what its bytes can hold."""
    root = _Root()
    _walk(data, part, root)
    if root.count is not None and root.count > len(data) // SST_BYTES_PER_STRING:
        raise ParseError(
            f"{part} declares {root.count} unique strings in {len(data)} bytes; "
            "calamine would reserve room for all of them at once"
        )


@attrs.define
class _Relations:
    """``Relationship`` elements: Id -> Target, and the office document's target."""

    targets: dict[str, str] = attrs.Factory(dict)
    office: str | None = None

    def start(self, tag: str, attrs_: dict[str, str]) -> None:
        if _local(tag) != "Relationship":
            return
        target = attrs_.get("Target", "")
        if attrs_.get("Type", "").endswith("/relationships/officeDocument") and self.office is None:
            self.office = target
        if "Id" in attrs_:
            self.targets.setdefault(attrs_["Id"], target)


@attrs.define
class _Sheets:
    """The ``id`` (any prefix) of each ``sheet`` element of the workbook part, in order."""

    ids: list[str | None] = attrs.Factory(list)

    def start(self, tag: str, attrs_: dict[str, str]) -> None:
        if _local(tag) == "sheet":
            self.ids.append(next((v for k, v in attrs_.items() if _local(k) == "id"), None))


@attrs.frozen
class SheetParts:
    """Where calamine reads the workbook from: its folder and the part of each listed sheet."""

    base: str
    paths: tuple[str | None, ...]  # None: a sheet whose part cannot be resolved


def sheet_parts(parts: dict[str, bytes]) -> SheetParts:
    """The part each listed sheet is read from, resolved as calamine does."""
    root = _Relations()
    if "_rels/.rels" in parts:
        _walk(parts["_rels/.rels"], "_rels/.rels", root)
    office = root.office or "xl/workbook.xml"
    base = office[: office.rfind("/") + 1].lstrip("/") if "/" in office else ""
    rels = _Relations()
    if f"{base}_rels/workbook.xml.rels" in parts:
        _walk(parts[f"{base}_rels/workbook.xml.rels"], f"{base}_rels/workbook.xml.rels", rels)
    sheets = _Sheets()
    if f"{base}workbook.xml" in parts:
        _walk(parts[f"{base}workbook.xml"], f"{base}workbook.xml", sheets)
    paths: list[str | None] = []
    for rid in sheets.ids:
        target = rels.targets.get(rid) if rid is not None else None
        if target is None:
            paths.append(None)
        else:
            paths.append(target[1:] if target.startswith("/") else f"{base}{target}")
    return SheetParts(base, tuple(paths))


def sheet_grids(parts: dict[str, bytes], sheets: SheetParts) -> dict[str, int]:
    """The grid of every part a listed sheet reads; every XML part when one cannot be resolved
    exactly (calamine's own lookup may still find it), so the largest can stand in for it."""
    wanted = {p for p in sheets.paths if p is not None}
    if None in sheets.paths or not wanted <= parts.keys():
        wanted = {name for name in parts if name.endswith(".xml")}
    return {name: measure_part(parts[name], name) for name in sorted(wanted)}


def total_grid(grids: dict[str, int], sheets: SheetParts) -> int:
    """The workbook's grid: each listed sheet's part (one not found counts as the largest)."""
    largest = max(grids.values(), default=0)
    return sum(grids.get(p, largest) if p is not None else largest for p in sheets.paths)
