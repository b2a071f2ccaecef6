"""Hostile Office files of issue 21, each a few KB: written by hand here so every byte is the attack.

``xlsx_cases()`` are workbooks whose cell references make python-calamine allocate a huge grid
(which aborted the whole process before issue 21): single-quoted and spaced ``r`` attributes, rows
of 8+ and of 10 digits (wrapping calamine's u32), lowercase columns, cells without ``r`` placed by
counting, eight sheets each under the old per-sheet cap, one part listed as two sheets, and a
shared-strings table declaring 10^11 strings. ``BENIGN`` are the harmless look-alikes (a huge
``<dimension>`` with one cell) that must still index. ``office_cases()`` adds a docx of 1.4M empty
paragraphs and a pptx with one shape python-pptx cannot read. ``tests/hostile_corpus.py`` puts
them all in the CI corpus; the focused tests import them from here. Not a test module.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator

_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_RELS = "http://schemas.openxmlformats.org/package/2006/relationships"
_DOC_RELS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


def _zip(parts: dict[str, str]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in parts.items():
            archive.writestr(name, text)
    return out.getvalue()


def cell(ref: str | None, text: str, quote: str = '"', eq: str = "=") -> str:
    """An inline-string cell; ``ref`` None leaves out ``r``."""
    r = f" r{eq}{quote}{ref}{quote}" if ref is not None else ""
    return f'<c{r} t="inlineStr"><is><t>{text}</t></is></c>'


def workbook(sheets: list[str], *, targets: list[int] | None = None, shared: str | None = None) -> bytes:
    """A workbook whose sheet ``i`` reads the ``sheetData`` content ``sheets[targets[i]]``."""
    targets = targets if targets is not None else list(range(len(sheets)))
    listed = "".join(f'<sheet name="S{i}" sheetId="{i + 1}" r:id="rId{i + 1}"/>' for i in range(len(targets)))
    rels = "".join(
        f'<Relationship Id="rId{i + 1}" Type="{_DOC_RELS}/worksheet" Target="worksheets/sheet{t + 1}.xml"/>'
        for i, t in enumerate(targets)
    )
    if shared is not None:
        rels += f'<Relationship Id="rIdS" Type="{_DOC_RELS}/sharedStrings" Target="sharedStrings.xml"/>'
    parts = {
        "[Content_Types].xml": '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/'
        'package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/></Types>',
        "_rels/.rels": f'<?xml version="1.0"?><Relationships xmlns="{_RELS}"><Relationship Id="rId1" '
        f'Type="{_DOC_RELS}/officeDocument" Target="xl/workbook.xml"/></Relationships>',
        "xl/workbook.xml": f'<?xml version="1.0"?><workbook xmlns="{_MAIN}" xmlns:r="{_DOC_RELS}">'
        f"<sheets>{listed}</sheets></workbook>",
        "xl/_rels/workbook.xml.rels": f'<?xml version="1.0"?><Relationships xmlns="{_RELS}">{rels}'
        "</Relationships>",
    }
    for i, data in enumerate(sheets):
        parts[f"xl/worksheets/sheet{i + 1}.xml"] = (
            f'<?xml version="1.0"?><worksheet xmlns="{_MAIN}"><dimension ref="A1"/>'
            f"<sheetData>{data}</sheetData></worksheet>"
        )
    if shared is not None:
        parts["xl/sharedStrings.xml"] = shared
    return _zip(parts)


def _corner(far: str) -> str:
    return f'<row r="1">{cell("A1", "near")}</row><row r="1048576">{far}</row>'


XLSX_HOSTILE: dict[str, bytes] = {
    "xlsx-quoted-far.xlsx": workbook([_corner(cell("XFD1048576", "far", quote="'"))]),
    "xlsx-spaced-far.xlsx": workbook([_corner(cell("XFD1048576", "far", eq=" = "))]),
    "xlsx-lowercase-far.xlsx": workbook([_corner(cell("xfd1048576", "far"))]),
    "xlsx-long-row.xlsx": workbook([f'<row r="1">{cell("A1", "near")}{cell("AZ99999999", "far")}</row>']),
    "xlsx-wrapped-row.xlsx": workbook(
        [f'<row r="1">{cell("A4294967297", "wraps to row 1")}{cell("C4294967295", "last")}</row>']
    ),
    "xlsx-no-r.xlsx": workbook(
        [f'<row r="1">{cell("A1", "near")}</row><row r="99999999">{"<c></c>" * 40}{cell(None, "far")}</row>']
    ),
    "xlsx-eight-sheets.xlsx": workbook(
        [f'<row r="1">{cell("A1", "a")}</row><row r="390000">{cell("J390000", "b")}</row>'] * 8
    ),
    "xlsx-one-part-twice.xlsx": workbook(
        [f'<row r="1">{cell("A1", "a")}</row><row r="300000">{cell("J300000", "b")}</row>'], targets=[0, 0]
    ),
    "xlsx-shared-strings.xlsx": workbook(
        ['<row r="1"><c r="A1" t="s"><v>0</v></c></row>'],
        shared=f'<?xml version="1.0"?><sst xmlns="{_MAIN}" count="1" uniqueCount="99999999999">'
        "<si><t>hello</t></si></sst>",
    ),
}
#: What each hostile workbook's skip reason says.
XLSX_REASONS: dict[str, str] = {
    **dict.fromkeys(XLSX_HOSTILE, "calamine allocates every cell"),
    "xlsx-shared-strings.xlsx": "declares 99999999999 unique strings",
}
BENIGN: dict[str, bytes] = {
    "xlsx-huge-dimension.xlsx": workbook(
        [f'<row r="1">{cell("A1", "quarterly ledger of the orchard")}</row>']
    ).replace(b'<dimension ref="A1"/>', b'<dimension ref="A1:XFD1048576"/>'),
}


def empty_paragraphs_docx(count: int = 1_400_000) -> bytes:
    """``word/document.xml`` of ``count`` empty paragraphs (about 13 KB of Deflate for 1.4M)."""
    body = "<w:p/>" * count
    return _zip(
        {
            "[Content_Types].xml": "<Types/>",
            "word/document.xml": f'<?xml version="1.0"?><w:document xmlns:w="{W_NS}"><w:body>{body}'
            "</w:body></w:document>",
        }
    )


def odd_shape_pptx() -> bytes:
    """A deck whose one slide has a readable text box and a table python-pptx cannot read."""
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[6])
    box = slide.shapes.add_textbox(Inches(1), Inches(1), Inches(4), Inches(1))
    box.text_frame.text = "the greenhouse vents open at noon"
    table = slide.shapes.add_table(2, 2, Inches(1), Inches(3), Inches(4), Inches(1)).table
    table.cell(0, 0).text = "unreadable table"
    table.cell(0, 1)._tc.set("hMerge", "maybe")  # not an xsd:boolean: python-pptx raises on it
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


def office_cases() -> Iterator[tuple[str, bytes]]:
    """Every hostile and benign Office file above, for the CI corpus."""
    yield from XLSX_HOSTILE.items()
    yield from BENIGN.items()
    yield "docx-empty-paragraphs.docx", empty_paragraphs_docx()
    yield "pptx-odd-shape.pptx", odd_shape_pptx()
