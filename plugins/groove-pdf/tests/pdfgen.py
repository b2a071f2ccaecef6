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


def reportlab_japanese_pdf(text: str, *, indirect_descendant: bool = False) -> bytes:
    """Japanese in ReportLab's CID-keyed Type0 font (HeiseiMin-W3, UniJIS-UCS2-H, no ``/ToUnicode``).

    ReportLab writes the ``/DescendantFonts`` CIDFont directly inside the array; with
    ``indirect_descendant`` the file is rewritten so the array holds an indirect reference instead,
    the other form met in practice (R3.91).
    """
    import io

    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont
    from reportlab.pdfgen import canvas

    pdfmetrics.registerFont(UnicodeCIDFont("HeiseiMin-W3"))
    buf = io.BytesIO()
    page = canvas.Canvas(buf)
    page.setFont("HeiseiMin-W3", 12)
    for i, line in enumerate(text.split("\n")):
        page.drawString(50, 780 - 16 * i, line)
    page.showPage()
    page.save()
    if not indirect_descendant:
        return buf.getvalue()
    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import ArrayObject, DictionaryObject, NameObject

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(buf.getvalue())))
    fonts = writer.pages[0]["/Resources"]["/Font"]
    for key in list(fonts):
        font = fonts[key].get_object()
        if font.get("/Subtype") == "/Type0":
            descendant = font["/DescendantFonts"][0].get_object()
            assert isinstance(descendant, DictionaryObject)
            font[NameObject("/DescendantFonts")] = ArrayObject([writer._add_object(descendant)])
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def encrypted_pdf(pages: Sequence[Sequence[str]]) -> bytes:
    """``text_pdf`` encrypted with a user password (RC4-128, which pypdf writes without extras)."""
    import io

    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(text_pdf(pages))))
    writer.encrypt(user_password="secret", owner_password="owner", algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def huge_text_page_pdf(megabytes: int) -> bytes:
    """One page whose Flate content stream inflates to ``megabytes`` MB of text; a few KB on disk.

    Compressed in pieces, so the test never holds the inflated stream either.
    """
    line = b"(All work and no play makes a dull index, all work and no play.) Tj T*\n"
    piece = line * (1_000_000 // len(line))
    squeezer = zlib.compressobj(9)
    body = [squeezer.compress(b"BT /F1 11 Tf 14 TL 50 780 Td\n")]
    for _ in range(megabytes):
        body.append(squeezer.compress(piece))
    body.append(squeezer.compress(b"ET") + squeezer.flush())
    data = b"".join(body)
    stream = b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(data) + data + b"\nendstream"
    return assemble(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
            HELVETICA,
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >> >> "
            b"/Contents 5 0 R >>",
            stream,
        ]
    )


def deep_page_tree_pdf(depth: int = 10_000) -> bytes:
    """A page tree nested ``depth`` levels deep: each ``/Pages`` node's only kid is the next one."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>"]
    for i in range(depth):
        objects.append(b"<< /Type /Pages /Kids [%d 0 R] /Count 1 >>" % (i + 3))
    objects.append(
        b"<< /Type /Page /MediaBox [0 0 595 842] /Contents %d 0 R /Resources << /Font << /F1 %d 0 R >> >> >>"
        % (depth + 3, depth + 4)
    )
    objects.append(_stream(lines_content(["A page at the bottom of a very deep tree."])))
    objects.append(HELVETICA)
    return assemble(objects)


def deep_array_pdf(depth: int = 10_000) -> bytes:
    """A page whose resources hold an array nested ``depth`` levels deep (a recursive-parser trap)."""
    nested = b"[" * depth + b"1" + b"]" * depth
    content = lines_content(["This page carries a resource array nested ten thousand levels deep."])
    return assemble(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
            HELVETICA,
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >> "
            b"/Deep " + nested + b" >> /Contents 5 0 R >>",
            _stream(content),
        ]
    )


def dense_page_pdf(lines: int) -> bytes:
    """One compressed page of ``lines`` lines of English (about 60 bytes each): slow for pypdf to read."""
    line = b"(The quick brown fox jumps over the lazy dog again and again.) Tj T*\n"
    return handmade_pdf([b"BT /F1 11 Tf 14 TL 50 780 Td\n" + line * lines + b"ET"], compress=True)
