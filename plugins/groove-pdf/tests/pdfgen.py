"""Test PDFs written byte by byte: the fonts and structures the tests need, with no font files.

``handmade_pdf`` writes a minimal, valid PDF (catalog, page tree, pages, fonts, an xref table) so a
test can pin exactly the structure a rule is about: a Type0 font with ``/ToUnicode`` (how Word and
LibreOffice write Japanese), a single-byte font fed UTF-16BE bytes (the mojibake the gate stops), a
page tree nested 10,000 levels deep, a compressed content stream holding 100 MB of text.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

HELVETICA = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"


def _stream(body: bytes, *, compress: bool = False) -> bytes:
    if compress:
        body = zlib.compress(body, 9)
        return b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(body) + body + b"\nendstream"
    return b"<< /Length %d >>\nstream\n" % len(body) + body + b"\nendstream"


def pdf_text(text: str) -> bytes:
    """A PDF literal string for WinAnsi text (ASCII here), with the three special characters escaped."""
    return (
        b"("
        + text.encode("latin-1").replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")
        + b")"
    )


def lines_content(lines: Sequence[str], font: bytes = b"/F1") -> bytes:
    """A content stream drawing each line of ASCII text with ``font`` at 11 pt, top to bottom."""
    ops = [b"BT", font + b" 11 Tf", b"14 TL", b"50 780 Td"]
    for line in lines:
        ops.append(pdf_text(line) + b" Tj T*")
    ops.append(b"ET")
    return b"\n".join(ops)


def assemble(objects: list[bytes], root: int = 1, info: int | None = None) -> bytes:
    """Number ``objects`` 1..n, write them with an xref table and a trailer."""
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    trailer = b"<< /Size %d /Root %d 0 R" % (len(objects) + 1, root)
    if info is not None:
        trailer += b" /Info %d 0 R" % info
    out += b"trailer\n" + trailer + b" >>\nstartxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)


def handmade_pdf(
    contents: Sequence[bytes],
    *,
    fonts: bytes = b"/F1 3 0 R",
    font_objects: Sequence[bytes] = (HELVETICA,),
    info: bytes | None = None,
    compress: bool = False,
) -> bytes:
    """A PDF with one page per content stream; object 3 onwards are ``font_objects``."""
    n_fonts = len(font_objects)
    first_page = 3 + n_fonts
    kids = b" ".join(b"%d 0 R" % (first_page + 2 * i) for i in range(len(contents)))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, len(contents)),
        *font_objects,
    ]
    for i, content in enumerate(contents):
        page = first_page + 2 * i
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << %s >> >> "
            b"/Contents %d 0 R >>" % (fonts, page + 1)
        )
        objects.append(_stream(content, compress=compress))
    info_number = None
    if info is not None:
        objects.append(info)
        info_number = len(objects)
    return assemble(objects, info=info_number)


def text_pdf(pages: Sequence[Sequence[str]], *, title: bytes | None = None, date: str | None = None) -> bytes:
    """ASCII pages of Helvetica text; ``title`` is a raw PDF string token such as ``b"(My title)"``."""
    info = None
    if title is not None or date is not None:
        info = b"<< " + (b"/Title " + title + b" " if title is not None else b"")
        info += (b"/CreationDate (" + date.encode() + b")" if date is not None else b"") + b" >>"
    return handmade_pdf([lines_content(p) for p in pages], info=info)


def tounicode_japanese_pdf(text: str) -> bytes:
    """Japanese text in a Type0 / CIDFontType2 font with Identity-H and a ``/ToUnicode`` CMap.

    The shape Word, LibreOffice and Google Docs write for an embedded TrueType subset (R3.91): each
    character gets its own CID (1, 2, ...), the content stream shows the CIDs as two-byte codes, and
    only the ToUnicode CMap says which character each code is. No glyphs are needed to extract text.
    """
    chars = list(dict.fromkeys(text.replace("\n", "")))
    cid = {c: i + 1 for i, c in enumerate(chars)}
    bfchar = b"\n".join(b"<%04X> <%04X>" % (cid[c], ord(c)) for c in chars)
    cmap = (
        b"/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n"
        b"/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n"
        b"/CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n"
        b"1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n"
        b"%d beginbfchar\n" % len(chars) + bfchar + b"\nendbfchar\nendcmap\n"
        b"CMapName currentdict /CMap defineresource pop\nend\nend"
    )
    ops = [b"BT", b"/F1 12 Tf", b"16 TL", b"50 780 Td"]
    for line in text.split("\n"):
        ops.append(b"<" + b"".join(b"%04X" % cid[c] for c in line) + b"> Tj T*")
    ops.append(b"ET")
    fonts = [
        b"<< /Type /Font /Subtype /Type0 /BaseFont /ABCDEF+MSMincho /Encoding /Identity-H "
        b"/DescendantFonts [4 0 R] /ToUnicode 5 0 R >>",
        b"<< /Type /Font /Subtype /CIDFontType2 /BaseFont /ABCDEF+MSMincho "
        b"/CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> "
        b"/FontDescriptor 6 0 R /DW 1000 /CIDToGIDMap /Identity >>",
        _stream(cmap),
        b"<< /Type /FontDescriptor /FontName /ABCDEF+MSMincho /Flags 4 /FontBBox [0 -141 1000 859] "
        b"/ItalicAngle 0 /Ascent 859 /Descent -141 /CapHeight 859 /StemV 80 >>",
    ]
    return handmade_pdf([b"\n".join(ops)], font_objects=fonts)
