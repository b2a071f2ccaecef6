"""Reading ``word/document.xml``: paragraphs and tables in document order (SPEC R3.46, R3.61–R3.64).

A paragraph's text is its ``w:t`` runs concatenated, ``w:tab`` as a tab and ``w:br`` / ``w:cr`` as a
newline (run and paragraph properties are skipped: their ``w:tab`` elements are tab stops, not
text). A table becomes one line per row, cells joined by a tab: a cell's paragraphs and line breaks
are joined by a single space; a horizontally merged cell (``w:gridSpan``) is written once; a
vertical-merge continuation cell is an empty field and its text is not indexed; a row whose cells
are all empty is omitted; a nested table's rows follow the row that holds them, one line each.
Content controls (``w:sdt``) and custom-XML wrappers are read through.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import attrs

from .docx_styles import W

_TEXT_SKIP = {f"{W}pPr", f"{W}rPr", f"{W}delText", f"{W}instrText"}
_WRAPPERS = {f"{W}sdt", f"{W}customXml", f"{W}smartTag", f"{W}ins"}


@attrs.frozen
class Paragraph:
    text: str
    style: str | None


@attrs.frozen
class TableRows:
    lines: tuple[str, ...]


Block = Paragraph | TableRows


def paragraph_text(p: Any) -> str:
    """R3.46: the paragraph's runs, tabs and breaks, in order."""
    out: list[str] = []
    stack = [iter(p)]
    while stack:
        node = next(stack[-1], None)
        if node is None:
            stack.pop()
            continue
        tag = node.tag
        if not isinstance(tag, str) or tag in _TEXT_SKIP:
            continue
        if tag == f"{W}t":
            out.append(node.text or "")
        elif tag == f"{W}tab":
            out.append("\t")
        elif tag in (f"{W}br", f"{W}cr"):
            out.append("\n")
        else:
            stack.append(iter(node))
    return "".join(out)


def _style(p: Any) -> str | None:
    node = p.find(f"{W}pPr/{W}pStyle")
    return node.get(f"{W}val") if node is not None else None


def _children(container: Any) -> Iterator[Any]:
    """The container's block-level children, with content-control and custom-XML wrappers opened."""
    for child in container:
        if child.tag in _WRAPPERS:
            inner = child.find(f"{W}sdtContent") if child.tag == f"{W}sdt" else child
            if inner is not None:
                yield from _children(inner)
        else:
            yield child


def _is_continuation(tc: Any) -> bool:
    merge = tc.find(f"{W}tcPr/{W}vMerge")
    return merge is not None and merge.get(f"{W}val", "continue") != "restart"


def _cell(tc: Any, nested: list[str]) -> str:
    parts = []
    for child in _children(tc):
        if child.tag == f"{W}p":
            text = " ".join(paragraph_text(child).split("\n")).strip(" ")
            if text:
                parts.append(text)
        elif child.tag == f"{W}tbl":
            nested.extend(table_lines(child))
    return " ".join(parts)


def table_lines(tbl: Any) -> list[str]:
    """R3.61–R3.64: one line per row (cells tab-joined), nested rows after their row."""
    lines: list[str] = []
    for tr in _children(tbl):
        if tr.tag != f"{W}tr":
            continue
        fields: list[str] = []
        nested: list[str] = []
        for tc in _children(tr):
            if tc.tag != f"{W}tc":
                continue
            fields.append("" if _is_continuation(tc) else _cell(tc, nested))
        if any(f.strip() for f in fields):
            lines.append("\t".join(fields))
        lines.extend(nested)
    return lines


def body_blocks(root: Any) -> list[Block]:
    """The document body as paragraphs (with their style ID) and tables, in document order."""
    body = root.find(f"{W}body")
    if body is None:
        return []
    blocks: list[Block] = []
    for child in _children(body):
        if child.tag == f"{W}p":
            blocks.append(Paragraph(paragraph_text(child), _style(child)))
        elif child.tag == f"{W}tbl":
            blocks.append(TableRows(tuple(table_lines(child))))
    return blocks
