"""What the three Office parsers share: the budgeted package, safe XML, core properties (SPEC §3.6).

A package is opened through ``grooveseek.BudgetedZip`` so every inflated byte counts against the
decompression budget (R3.41). XML is parsed with entities left unresolved and no DTD or network
access, and a part that declares a DTD is refused outright: OOXML never has one, so a DOCTYPE is an
entity-expansion attack ("billion laughs"), not a document. A part whose XML breaks off keeps the
text read before the damage and says so (R3.43). ``docProps/core.xml`` gives title, date and tags
(R3.44).

Beside the byte budget, every XML part read counts its elements against an element budget that
grows with the file's size (``ELEMENT_FLOOR`` + ``ELEMENTS_PER_BYTE`` per byte of the file, issue
21): a few KB of Deflate can inflate to millions of empty elements, each costing a tree node and a
Python step, so work and memory stay proportional to the file rather than to its compression
ratio. Honest files hold about one element per byte of the file.
"""

from __future__ import annotations

import re
from typing import Any

import attrs
from lxml import etree

from grooveseek import BudgetedZip, DecompressionBudget, ParseContext, ParseError, metadata_date

DC = "{http://purl.org/dc/elements/1.1/}"
DCTERMS = "{http://purl.org/dc/terms/}"
CP = "{http://schemas.openxmlformats.org/package/2006/metadata/core-properties}"
LEGACY = "an Office file must be a .docx, .xlsx or .pptx zip package"
#: XML elements every package may hold, whatever its size.
ELEMENT_FLOOR = 250_000
#: XML elements each byte of the file adds to the element budget.
ELEMENTS_PER_BYTE = 4


def element_count(data: bytes) -> int:
    """An upper bound on the elements of an XML part: its start tags (``<`` not followed by
    ``/``, ``?`` or ``!``). A literal ``<`` occurs nowhere else outside comments and CDATA."""
    return data.count(b"<") - data.count(b"</") - data.count(b"<?") - data.count(b"<!")


def element_budget(file_size: int) -> int:
    """The most XML elements a package of ``file_size`` bytes may hold."""
    return ELEMENT_FLOOR + ELEMENTS_PER_BYTE * file_size


class OfficeZip(BudgetedZip):
    """A ``BudgetedZip`` that also counts the elements of every XML part it reads."""

    def __init__(self, data: bytes, budget: DecompressionBudget) -> None:
        super().__init__(data, budget)
        self.size = len(data)
        self.elements = 0

    def read(self, name: str) -> bytes | None:
        data = super().read(name)
        if data is not None and name.endswith((".xml", ".rels")):
            self.elements += element_count(data)
            limit = element_budget(self.size)
            if self.elements > limit:
                raise ParseError(
                    f"too many XML elements: {name} brings the package to {self.elements} "
                    f"(a {self.size}-byte file may hold {limit}: {ELEMENT_FLOOR} + {ELEMENTS_PER_BYTE} "
                    "per byte), so reading it would cost far more than the file's size"
                )
        return data


def xml_parser(*, recover: bool = False) -> etree.XMLParser:
    """lxml's parser with every external or expanding feature off."""
    return etree.XMLParser(
        resolve_entities=False,
        load_dtd=False,
        no_network=True,
        huge_tree=False,
        remove_comments=True,
        recover=recover,
    )


def refuse_dtd(data: bytes, part: str) -> None:
    """OOXML parts never declare a DTD: one that does is refused before any parser sees it."""
    if re.search(rb"<!DOCTYPE", data[:4096], re.IGNORECASE) or b"<!ENTITY" in data:
        raise ParseError(
            f"{part} declares a DTD with entities, which Office files never do "
            "(refused as a possible entity-expansion attack)"
        )


def parse_part(data: bytes, part: str, rel: str, ctx: ParseContext) -> Any:
    """Parse one XML part; refuses a DTD, keeps what precedes damage with a warning (R3.43)."""
    refuse_dtd(data, part)
    try:
        return etree.fromstring(data, xml_parser())
    except etree.XMLSyntaxError:
        pass
    root = etree.fromstring(data, xml_parser(recover=True)) if data.strip() else None
    if root is None:
        raise ParseError(f"{part} is not readable XML")
    ctx.warn(f"{rel}: {part} is damaged; text after the damage is missing")
    return root


def join_lines(lines: list[tuple[str, bool]]) -> tuple[str, tuple[tuple[int, int], ...]]:
    """Lines joined by ``\\n``, with the UTF-8 byte range of every line flagged as a table row (R3.66)."""
    rows: list[tuple[int, int]] = []
    offset = 0
    for n, (line, is_row) in enumerate(lines):
        offset += 1 if n else 0  # the "\n" before every line but the first
        size = len(line.encode("utf-8"))
        if is_row:
            rows.append((offset, offset + size))
        offset += size
    return "\n".join(line for line, _ in lines), tuple(rows)


@attrs.frozen
class CoreProps:
    title: str | None = None
    date: str | None = None
    tags: tuple[str, ...] = ()


def core_props(root: Any) -> CoreProps:
    """R3.44: ``dc:title``; ``dcterms:created``, else ``modified``; ``cp:keywords`` split on , and ;."""
    if root is None:
        return CoreProps()

    def text(tag: str) -> str:
        node = root.find(tag)
        return (node.text or "").strip() if node is not None else ""

    title = text(f"{DC}title") or None
    date = metadata_date(text(f"{DCTERMS}created")) or metadata_date(text(f"{DCTERMS}modified"))
    tags = tuple(t.strip() for t in re.split(r"[,;]", text(f"{CP}keywords")) if t.strip())
    return CoreProps(title=title, date=date, tags=tuple(dict.fromkeys(tags)))


def open_package(data: bytes, ctx: ParseContext, *, read: bool) -> OfficeZip:
    """The package under this parse's budgets (index or read side); a non-zip is refused (R3.42)."""
    return OfficeZip(data, DecompressionBudget.for_context(ctx, read=read))


def read_core(package: BudgetedZip, rel: str, ctx: ParseContext) -> CoreProps:
    data = package.read("docProps/core.xml")
    if data is None:
        return CoreProps()
    try:
        return core_props(parse_part(data, "docProps/core.xml", rel, ctx))
    except ParseError as exc:
        if "DTD" in str(exc):
            raise
        ctx.warn(f"{rel}: docProps/core.xml: {exc}; metadata ignored")
        return CoreProps()


def require(package: BudgetedZip, part: str, what: str) -> bytes:
    """A part the format cannot do without; its absence names the part and the format."""
    data = package.read(part)
    if data is None:
        raise ParseError(f"not {what}: the package has no {part} ({LEGACY})")
    return data
