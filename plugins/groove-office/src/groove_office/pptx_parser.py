"""The ``.pptx`` parser: one ``Slide N[: title]`` section per slide with text or notes (SPEC §3.9).

python-pptx reads every XML part of a package, so the parts it will read are inflated once under
the decompression budget and handed to it re-packed; pictures, media and embedded objects are
never inflated (they are replaced by empty entries, which python-pptx does not open unless a
picture's bytes are asked for). Shapes are read in shape-tree order (groups recursed); ``a:br``
is a newline in text and a space in the heading; tables follow R3.61–R3.63 with their row byte
ranges kept (R3.66); speaker notes come through the slide's own notesSlide relationship (R3.59).
A shape python-pptx cannot classify or read is skipped with a warning naming the slide and the
shape, never the whole deck (issue 21).
"""

from __future__ import annotations

import functools
import io
import zipfile
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

from lxml import etree

from grooveseek import BudgetedZip, ParseContext, ParsedDocument, ParseError, Parser, Section, filename_title

from .ooxml import join_lines, open_package, parse_part, read_core, refuse_dtd, require, xml_parser

# Parts python-pptx does not need to read to give us text: binary payloads only.
_SKIPPED_PREFIXES = ("ppt/media/", "ppt/embeddings/", "ppt/fonts/", "docProps/thumbnail")


def _read_part(name: str) -> bool:
    return not name.startswith(_SKIPPED_PREFIXES)


def _mended(data: bytes, name: str, rel: str, ctx: ParseContext) -> bytes:
    """A slide or notes part as python-pptx can read it: damaged XML keeps what precedes the damage."""
    try:
        etree.fromstring(data, xml_parser())
        return data
    except etree.XMLSyntaxError:
        return etree.tostring(parse_part(data, name, rel, ctx))  # warns (R3.43)


def _repack(package: BudgetedZip, rel: str, ctx: ParseContext) -> bytes:
    """Inflate the parts python-pptx reads under the budget; a stored zip of them, media emptied."""
    package.check_declared(_read_part)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as target:
        for name in package.names():
            data = (package.read(name) or b"") if _read_part(name) else b""
            if name.endswith((".xml", ".rels")):
                refuse_dtd(data, name)  # python-pptx would leave the entities unexpanded; refuse it whole
            if name.startswith(("ppt/slides/slide", "ppt/notesSlides/")) and name.endswith(".xml"):
                data = _mended(data, name, rel, ctx)
            target.writestr(name, data)
    return out.getvalue()


def _lines(text: str) -> str:
    # python-pptx shows a:br inside a paragraph as a vertical tab.
    return text.replace("\v", "\n")


def _shape_label(shape: Any) -> str:
    try:
        return f"shape {shape.name!r} (id {shape.shape_id})"
    except Exception:  # noqa: BLE001 - a shape too broken to name is still named by position
        return "a shape"


def _iter_shapes(shapes: Any, skip: Callable[[Any, Exception], None]) -> Iterator[Any]:
    """Shapes in tree order, groups recursed; a shape that cannot even be looked at goes to ``skip``.

    A group is recognised by its ``shapes``, not by ``shape_type``, which raises
    ``NotImplementedError`` for a shape python-pptx does not classify (its text is still read).
    """
    for shape in shapes:
        try:
            is_group = hasattr(shape, "shapes")
        except Exception as exc:  # noqa: BLE001 - any python-pptx failure costs this shape only
            skip(shape, exc)
            continue
        if is_group:
            yield from _iter_shapes(shape.shapes, skip)
        else:
            yield shape


def _table_rows(table: Any) -> list[str]:
    """R3.61–R3.63: covered from the left → no field; covered from above → empty field."""
    lines = []
    for row in table.rows:
        fields = []
        for cell in row.cells:
            tc = cell._tc
            if tc.hMerge:
                continue
            if tc.vMerge:
                fields.append("")
                continue
            fields.append(" ".join(_lines(cell.text).split("\n")).strip(" "))
        if any(f.strip() for f in fields):
            lines.append("\t".join(fields))
    return lines


def _title(slide: Any) -> str | None:
    from pptx.enum.shapes import PP_PLACEHOLDER

    for shape in slide.placeholders:
        if shape.placeholder_format.type in (PP_PLACEHOLDER.TITLE, PP_PLACEHOLDER.CENTER_TITLE):
            text = " ".join(_lines(shape.text_frame.text).split()) if shape.has_text_frame else ""
            if text:
                return text
    return None


def _shape_part(shape: Any) -> list[tuple[str, bool]]:
    """One shape's table rows or text (nothing for a picture, a chart, a connector)."""
    if getattr(shape, "has_table", False):
        return [(line, True) for line in _table_rows(shape.table)]
    if getattr(shape, "has_text_frame", False):
        text = _lines(shape.text_frame.text).strip()
        return [(text, False)] if text else []
    return []


def slide_section(
    number: int, slide: Any, warn: Callable[[str], None] = lambda message: None
) -> Section | None:
    """One slide's section: shape texts and table rows, then ``[notes]``; None when it has neither.

    A shape python-pptx does not recognise (or cannot read) is skipped with a warning naming the
    slide and the shape; the rest of the slide and the deck are read (issue 21).
    """

    def skip(shape: Any, exc: Exception) -> None:
        warn(f"slide {number}: {_shape_label(shape)} skipped: {type(exc).__name__}: {exc}")

    parts: list[tuple[str, bool]] = []
    for shape in _iter_shapes(slide.shapes, skip):
        try:
            parts.extend(_shape_part(shape))
        except Exception as exc:  # noqa: BLE001 - one unreadable shape costs that shape only
            skip(shape, exc)
    notes = ""
    try:
        if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
            notes = _lines(slide.notes_slide.notes_text_frame.text).strip()
    except Exception as exc:  # noqa: BLE001 - unreadable notes cost the notes only
        warn(f"slide {number}: speaker notes skipped: {type(exc).__name__}: {exc}")
    if not parts and not notes:
        return None
    body, rows = join_lines(parts)
    if notes:
        body = f"{body}\n\n[notes]\n{notes}" if body else f"[notes]\n{notes}"
    try:
        title = _title(slide)
    except Exception as exc:  # noqa: BLE001 - a broken placeholder costs the title only
        warn(f"slide {number}: title skipped: {type(exc).__name__}: {exc}")
        title = None
    heading = f"Slide {number}: {title}" if title else f"Slide {number}"
    return Section(heading=heading, level=None, text=body, table_rows=rows)


def _warn(ctx: ParseContext, rel: str, message: str) -> None:
    ctx.warn(f"{rel}: {message}")


class PptxParser(Parser):
    """Parser ``pptx``: slides become chunks through the built-in ``pages`` chunker."""

    id: ClassVar[str] = "pptx"
    kind: ClassVar[str] = "binary"
    media_type: ClassVar[str] = "text/plain"
    chunker: ClassVar[str] = "pages"
    policy_version: ClassVar[str] = "1"

    def parse(self, data: bytes, rel_path: str, ctx: ParseContext) -> ParsedDocument:
        return self._parse(data, rel_path, ctx, read=False)

    def parse_for_read(self, data: bytes, rel_path: str, ctx: ParseContext) -> ParsedDocument:
        return self._parse(data, rel_path, ctx, read=True)

    def _parse(self, data: bytes, rel_path: str, ctx: ParseContext, *, read: bool) -> ParsedDocument:
        from pptx import Presentation

        package = open_package(data, ctx, read=read)
        require(package, "ppt/presentation.xml", "a PowerPoint presentation")
        stored = _repack(package, rel_path, ctx)
        core = read_core(open_package(stored, ctx, read=read), rel_path, ctx)
        try:
            deck = Presentation(io.BytesIO(stored))
        except Exception as exc:  # noqa: BLE001 - python-pptx's errors all mean "not a readable deck"
            raise ParseError(f"not a readable presentation: {type(exc).__name__}: {exc}") from None
        warn = functools.partial(_warn, ctx, rel_path)
        sections = [s for n, slide in enumerate(deck.slides, start=1) if (s := slide_section(n, slide, warn))]
        return ParsedDocument(
            sections=tuple(sections),
            read_text="\n\n".join(f"{s.heading}\n{s.text}" for s in sections),
            title=core.title or filename_title(rel_path) or None,
            date=core.date,
            tags=core.tags,
        )
