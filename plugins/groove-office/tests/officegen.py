"""Office files for the tests: hand-written OOXML parts where a rule needs exact XML, and the real
writers (python-docx, XlsxWriter, python-pptx) where a file should look like what people send."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Mapping, Sequence

W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
CONTENT_TYPES = (
    '<?xml version="1.0" encoding="UTF-8"?>'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="xml" ContentType="application/xml"/></Types>'
)


def core_xml(title: str | None = None, created: str | None = None, keywords: str | None = None) -> str:
    parts = []
    if title is not None:
        parts.append(f"<dc:title>{title}</dc:title>")
    if created is not None:
        parts.append(f'<dcterms:created xsi:type="dcterms:W3CDTF">{created}</dcterms:created>')
    if keywords is not None:
        parts.append(f"<cp:keywords>{keywords}</cp:keywords>")
    return (
        '<?xml version="1.0" encoding="UTF-8"?><cp:coreProperties '
        'xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" '
        'xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" '
        'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">' + "".join(parts) + "</cp:coreProperties>"
    )


def zip_parts(parts: Mapping[str, str | bytes], *, compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression) as archive:
        for name, data in parts.items():
            archive.writestr(name, data.encode("utf-8") if isinstance(data, str) else data)
    return out.getvalue()


def p(text: str = "", style: str | None = None) -> str:
    """A ``w:p``; ``\\t`` becomes ``w:tab``, ``\\n`` becomes ``w:br``."""
    ppr = (
        f'<w:pPr><w:pStyle w:val="{style}"/><w:tabs><w:tab w:val="left" w:pos="720"/></w:tabs></w:pPr>'
        if style
        else ""
    )
    runs = []
    for i, line in enumerate(text.split("\n")):
        if i:
            runs.append("<w:br/>")
        for j, piece in enumerate(line.split("\t")):
            if j:
                runs.append("<w:tab/>")
            if piece:
                runs.append(f'<w:t xml:space="preserve">{piece}</w:t>')
    return f"<w:p>{ppr}<w:r>{''.join(runs)}</w:r></w:p>"


def tc(content: str, *, span: int = 1, vmerge: str | None = None) -> str:
    props = ""
    if span > 1:
        props += f'<w:gridSpan w:val="{span}"/>'
    if vmerge == "restart":
        props += '<w:vMerge w:val="restart"/>'
    elif vmerge == "continue":
        props += "<w:vMerge/>"
    body = content if content.startswith(("<w:p", "<w:tbl")) else p(content)
    return f"<w:tc><w:tcPr>{props}</w:tcPr>{body}</w:tc>"


def tbl(rows: Sequence[Sequence[str]]) -> str:
    """A table; each cell is either plain text or ready-made ``tc`` XML."""
    body = "".join(
        "<w:tr>" + "".join(c if c.startswith("<w:tc>") else tc(c) for c in row) + "</w:tr>" for row in rows
    )
    return f"<w:tbl>{body}</w:tbl>"


def document_xml(body: str) -> str:
    head = f'<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="{W_NS}">'
    return f"{head}<w:body>{body}</w:body></w:document>"


def style(
    sid: str,
    name: str | None,
    *,
    based: str | None = None,
    outline: int | None = None,
    kind: str = "paragraph",
) -> str:
    inner = f'<w:name w:val="{name}"/>' if name is not None else ""
    if based:
        inner += f'<w:basedOn w:val="{based}"/>'
    if outline is not None:
        inner += f'<w:pPr><w:outlineLvl w:val="{outline}"/></w:pPr>'
    return f'<w:style w:type="{kind}" w:styleId="{sid}">{inner}</w:style>'


def styles_xml(*styles: str) -> str:
    return f'<?xml version="1.0" encoding="UTF-8"?><w:styles xmlns:w="{W_NS}">{"".join(styles)}</w:styles>'


def docx(
    body: str, *, styles: str | None = None, core: str | None = None, extra: Mapping[str, bytes] | None = None
) -> bytes:
    parts: dict[str, str | bytes] = {
        "[Content_Types].xml": CONTENT_TYPES,
        "word/document.xml": document_xml(body),
    }
    if core is not None:
        parts["docProps/core.xml"] = core
    if styles is not None:
        parts["word/styles.xml"] = styles
    parts.update(extra or {})
    return zip_parts(parts)


def billion_laughs_docx() -> bytes:
    """``word/document.xml`` with the classic nested entity definitions (a few hundred bytes)."""
    entities = '<!ENTITY lol "lol">' + "".join(
        f'<!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">' for i in range(1, 10)
    )
    xml = (
        f'<?xml version="1.0"?><!DOCTYPE w:document [{entities}]>'
        f'<w:document xmlns:w="{W_NS}"><w:body><w:p><w:r><w:t>&lol9;</w:t></w:r></w:p></w:body></w:document>'
    )
    return zip_parts({"[Content_Types].xml": CONTENT_TYPES, "word/document.xml": xml})


def bomb_member_docx(megabytes: int) -> bytes:
    """A docx whose ``word/document.xml`` inflates to ``megabytes`` MB (about 1 KB per MB on disk)."""
    filler = " " * (megabytes * 1_000_000)
    return docx(p("bomb") + f"<!--{filler}-->")


def nested_zip_bomb(levels: int = 3, width: int = 4) -> bytes:
    """42.zip-style: a zip of zips of zips; the innermost member is 10 MB of zeros."""
    inner = zip_parts({"zeros.bin": b"\0" * 10_000_000})
    for level in range(levels):
        inner = zip_parts({f"level{level}-{i}.zip": inner for i in range(width)})
    return inner


def xlsx(
    sheets: Mapping[str, Sequence[Sequence[object]]], *, title: str | None = None, image: bytes | None = None
) -> bytes:
    """A workbook written by XlsxWriter; dates get a date format, as Excel users' dates have."""
    import xlsxwriter

    out = io.BytesIO()
    book = xlsxwriter.Workbook(out, {"in_memory": True})
    if title is not None:
        book.set_properties({"title": title, "keywords": "budget, 2026"})
    date_format = book.add_format({"num_format": "yyyy-mm-dd"})
    for name, rows in sheets.items():
        sheet = book.add_worksheet(name)
        for r, row in enumerate(rows):
            for c, value in enumerate(row):
                if value is None:
                    continue
                if hasattr(value, "year"):
                    sheet.write_datetime(r, c, value, date_format)
                else:
                    sheet.write(r, c, value)
        if image is not None:
            sheet.insert_image("H2", "pixel.png", {"image_data": io.BytesIO(image)})
    book.close()
    return out.getvalue()


def pptx_deck(slides: Sequence[Mapping[str, object]], *, title: str | None = None) -> bytes:
    """A deck written by python-pptx. Each slide: ``title``, ``body`` lines, ``notes``, ``table`` rows,
    ``merge`` ((r1, c1, r2, c2) to merge in the table), ``group`` (text boxes inside a group shape)."""
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    if title is not None:
        deck.core_properties.title = title
    for spec in slides:
        layout = deck.slide_layouts[1] if spec.get("title") is not None else deck.slide_layouts[6]
        slide = deck.slides.add_slide(layout)
        if spec.get("title") is not None:
            slide.shapes.title.text = str(spec["title"])
            slide.placeholders[1].text = "\n".join(spec.get("body", []))  # type: ignore[arg-type]
        if spec.get("group"):
            group = slide.shapes.add_group_shape()
            for i, text in enumerate(spec["group"]):  # type: ignore[union-attr]
                box = group.shapes.add_textbox(Inches(1), Inches(5 + i * 0.4), Inches(3), Inches(0.4))
                box.text_frame.text = text
        rows = spec.get("table")
        if rows:
            n_rows, n_cols = len(rows), len(rows[0])  # type: ignore[arg-type]
            table = slide.shapes.add_table(n_rows, n_cols, Inches(1), Inches(3), Inches(6), Inches(1)).table
            for r, row in enumerate(rows):  # type: ignore[arg-type]
                for c, text in enumerate(row):
                    table.cell(r, c).text = text
            for r1, c1, r2, c2 in spec.get("merge", []):  # type: ignore[union-attr]
                table.cell(r1, c1).merge(table.cell(r2, c2))
            for r, c, text in spec.get("hidden", []):  # type: ignore[union-attr]
                table.cell(r, c).text = text  # text left in a covered cell (invisible in PowerPoint)
        if spec.get("notes"):
            slide.notes_slide.notes_text_frame.text = str(spec["notes"])
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


# A 1x1 PNG; repeated in xl/media it makes a workbook whose images alone pass a small budget.
PIXEL_PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000100e221bc330000000049454e44ae426082"
)
