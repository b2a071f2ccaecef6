"""The ``.docx`` parser: heading sections by the Markdown rules, tables as rows (SPEC §3.7, §3.10).

Parts are read in the SPEC's order under one budget: ``word/document.xml``, ``docProps/core.xml``,
then ``word/styles.xml`` (R3.47). A styles part that is malformed or would pass the budget is
skipped with a one-line warning and headings fall back to the style-ID spelling (R3.48). Sections
follow R3.49: a heading with a body heads its chunk, a heading without one is folded into the next
section that has a body, trailing body-less headings are dropped, and a document of headings alone
gives one chunk per heading. Table rows keep their byte ranges for ``Hit.table_rows`` (R3.66).
"""

from __future__ import annotations

from typing import ClassVar

import attrs
from lxml import etree

from grooveseek import (
    BudgetedZip,
    BudgetExceeded,
    ParseContext,
    ParsedDocument,
    Parser,
    Section,
    filename_title,
)

from .docx_body import Paragraph, TableRows, body_blocks
from .docx_styles import StyleTable
from .ooxml import join_lines, open_package, parse_part, read_core, require, xml_parser

STYLES = "word/styles.xml"


@attrs.define
class _Building:
    """A section being built: its heading, the headings folded into it, its body lines."""

    heading: str | None
    level: int | None
    folded: list[str] = attrs.Factory(list)
    lines: list[tuple[str, bool]] = attrs.Factory(list)  # (text, is a table row)

    def section(self) -> Section:
        text, rows = join_lines([(h, False) for h in self.folded] + self.lines)
        return Section(heading=self.heading, level=self.level, text=text, table_rows=rows)


def _styles(package: BudgetedZip, rel: str, ctx: ParseContext) -> StyleTable:
    """R3.47/R3.48: the style table, or an empty one (spelling fallback) with a warning."""
    try:
        data = package.read(STYLES)
    except BudgetExceeded:
        budget = package.budget
        ctx.warn(
            f"{rel}: {STYLES} skipped: reading it would pass the decompression budget ({budget.name}, "
            f"{budget.limit} bytes); headings are decided by style-ID spelling"
        )
        return StyleTable(None)
    if data is None:
        return StyleTable(None)  # a missing part is not worth a warning (R3.48)
    problem = None
    if b"<!DOCTYPE" in data or b"<!ENTITY" in data:
        problem = "it declares a DTD"
    else:
        try:
            return StyleTable(etree.fromstring(data, xml_parser()))
        except etree.XMLSyntaxError as exc:
            problem = f"malformed XML ({exc})"
    ctx.warn(f"{rel}: {STYLES} ignored: {problem}; headings are decided by style-ID spelling")
    return StyleTable(None)


def _sections(blocks: list[Paragraph | TableRows], styles: StyleTable) -> list[Section]:
    """R3.49 over the body blocks."""
    done: list[_Building] = []
    current = _Building(None, None)
    headings_only: list[tuple[str, int]] = []
    for block in blocks:
        if isinstance(block, Paragraph):
            level = styles.level(block.style)
            text = block.text.strip()
            if level is not None and text:
                heading_text = " ".join(text.split())
                headings_only.append((heading_text, level))
                if current.lines or current.heading is None:
                    if current.lines:
                        done.append(current)
                    current = _Building(heading_text, level, folded=[])
                else:  # the previous heading had no body: fold it into what follows
                    current = _Building(heading_text, level, folded=[*current.folded, current.heading])
                continue
            if text:
                current.lines.append((block.text.strip("\n"), False))
        else:
            current.lines.extend((line, True) for line in block.lines)
    if current.lines:
        done.append(current)
    if not done and headings_only:
        return [Section(heading=h, level=lv, text=h) for h, lv in headings_only]
    return [b.section() for b in done]


class DocxParser(Parser):
    """Parser ``docx`` (Markdown-style sections through the built-in ``sections`` chunker)."""

    id: ClassVar[str] = "docx"
    kind: ClassVar[str] = "binary"
    media_type: ClassVar[str] = "text/plain"
    chunker: ClassVar[str] = "sections"
    policy_version: ClassVar[str] = "1"

    def parse(self, data: bytes, rel_path: str, ctx: ParseContext) -> ParsedDocument:
        return self._parse(data, rel_path, ctx, read=False)

    def parse_for_read(self, data: bytes, rel_path: str, ctx: ParseContext) -> ParsedDocument:
        return self._parse(data, rel_path, ctx, read=True)

    def _parse(self, data: bytes, rel_path: str, ctx: ParseContext, *, read: bool) -> ParsedDocument:
        package = open_package(data, ctx, read=read)
        body = require(package, "word/document.xml", "a Word document")
        document = parse_part(body, "word/document.xml", rel_path, ctx)
        core = read_core(package, rel_path, ctx)
        styles = _styles(package, rel_path, ctx)
        sections = _sections(body_blocks(document), styles)
        return ParsedDocument(
            sections=tuple(sections),
            read_text="\n\n".join(s.text for s in sections),
            title=core.title or filename_title(rel_path) or None,
            date=core.date,
            tags=core.tags,
        )
