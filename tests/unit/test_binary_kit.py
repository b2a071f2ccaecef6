"""The kit for binary-format parsers (``grooveseek.binary``) and the R3.66 table-row ranges in chunking."""

from __future__ import annotations

import io
import struct
import zipfile
from datetime import date, datetime

import pytest

from grooveseek import BudgetedZip, BudgetExceeded, DecompressionBudget, ParseError, metadata_date
from grooveseek.builtins.chunkers import PagesChunker, SectionsChunker, stripped_rows
from grooveseek.testing import recording_parse_context
from grooveseek.types import ChunkSettings, ParsedDocument, Section


def _zip(parts: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in parts.items():
            archive.writestr(name, data)
    return out.getvalue()


def _lie_about_size(data: bytes, name: bytes, size: int) -> bytes:
    """Rewrite the declared uncompressed size of ``name`` in both the local and central headers."""
    raw = bytearray(data)
    local = raw.index(b"PK\x03\x04")
    struct.pack_into("<I", raw, local + 22, size)
    central = raw.index(b"PK\x01\x02")
    struct.pack_into("<I", raw, central + 24, size)
    assert name in raw
    return bytes(raw)


def test_budget_names_the_index_key_or_the_read_budget():
    index = DecompressionBudget.for_context(recording_parse_context(max_decompressed_size=10))
    with pytest.raises(BudgetExceeded) as info:
        index.take(11, "word/document.xml")
    assert str(info.value) == (
        "over the decompression budget: word/document.xml inflates past 10 bytes "
        "([index].max_decompressed_size); raise [index].max_decompressed_size to index it"
    )
    read = DecompressionBudget.for_context(recording_parse_context(), read=True)
    message = str(read.refusal("x.xml", 99))
    assert "read-side 50 MiB decompression budget" in message and "raise" not in message


def test_budgeted_zip_counts_declared_and_inflated_bytes():
    data = _zip({"a.xml": b"a" * 1000, "b.bin": b"\0" * 5000})
    package = BudgetedZip(data, DecompressionBudget(3000))
    assert package.read("missing") is None
    assert package.read("a.xml") == b"a" * 1000
    assert package.budget.used == 1000
    with pytest.raises(BudgetExceeded, match=r"b\.bin inflates past 3000 bytes \(5000 bytes; "):
        package.read("b.bin")
    with pytest.raises(BudgetExceeded, match="entries declare"):
        BudgetedZip(data, DecompressionBudget(5999)).check_declared()
    BudgetedZip(data, DecompressionBudget(6000)).check_declared()


def test_a_member_that_lies_about_its_size_is_stopped():
    data = _lie_about_size(_zip({"x.xml": b"x" * 200_000}), b"x.xml", 10)
    package = BudgetedZip(data, DecompressionBudget(1000))
    with pytest.raises(ParseError) as info:
        package.read("x.xml")
    # zipfile stops at the declared size and the CRC no longer matches; nothing past 1000 bytes is kept.
    assert "x.xml" in str(info.value)
    assert package.budget.used <= 1000


def test_not_a_zip_names_password_protection():
    with pytest.raises(ParseError, match="password-protected files are not supported"):
        BudgetedZip(b"\xd0\xcf\x11\xe0 an OLE container", DecompressionBudget(100))


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("D:20260314093000+09'00'", "2026-03-14"),
        ("D:2026", "2026-01-01"),
        ("2025-11-03T10:00:00Z", "2025-11-03"),
        ("D:20261399", None),
        ("yesterday", None),
        (datetime(2026, 1, 2, 3, 4), "2026-01-02"),
        (date(2026, 5, 6), "2026-05-06"),
        (None, None),
    ],
)
def test_metadata_date(value, expected):
    assert metadata_date(value) == expected


def test_stripped_rows_rebase_and_clip():
    assert stripped_rows("  ab\tc\n", [(2, 6)]) == ((0, 4),)
    assert stripped_rows("  ab  ", [(0, 1), (4, 6)]) == ()


def _doc(*sections: Section) -> ParsedDocument:
    return ParsedDocument(sections=sections, read_text="")


def test_sections_chunker_carries_table_rows_through_the_merge():
    long = "A body long enough that it is never merged into the chunk before it."
    rows_text = "\nx\ty\n"
    merged = _doc(
        Section("Long", 1, long),
        Section("Small", 1, rows_text, table_rows=((1, 4),)),
    )
    (chunk,) = SectionsChunker().chunk(merged, ChunkSettings(markdown=False))
    assert chunk.content == f"{long}\n\nSmall\n\nx\ty"
    raw = chunk.content.encode()
    assert [raw[a:b] for a, b in chunk.table_rows] == [b"x\ty"]


def test_markdown_keeps_its_marker_other_formats_write_none():
    sections = (
        Section("Long", 1, "A body long enough that it is never merged into another chunk."),
        Section("S", 2, "t"),
    )
    markdown = SectionsChunker().chunk(_doc(*sections), ChunkSettings())[0].content
    other = SectionsChunker().chunk(_doc(*sections), ChunkSettings(markdown=False))[0].content
    assert markdown.endswith("\n\n## S\n\nt")
    assert other.endswith("chunk.\n\nS\n\nt")


def test_pages_chunker_rebases_table_rows():
    doc = _doc(Section("Slide 1", None, "\n title\na\tb", table_rows=((8, 11),)))
    (chunk,) = PagesChunker().chunk(doc, ChunkSettings())
    assert chunk.content == "title\na\tb"
    assert chunk.content.encode()[chunk.table_rows[0][0] : chunk.table_rows[0][1]] == b"a\tb"


def test_piece_rows_follow_a_split():
    from grooveseek.builtins.chunkers import piece_rows

    content = "intro line\nk1\tv1\nk2\tv2\nclosing é line\nk3\tv3"
    raw = content.encode()
    rows = tuple((raw.index(r), raw.index(r) + len(r)) for r in (b"k1\tv1", b"k2\tv2", b"k3\tv3"))
    pieces = ["intro line\nk1\tv1\nk2", "\tv2\nclosing é line", "k3\tv3"]
    shares = piece_rows(content, rows, pieces)
    texts = [[p.encode()[a:b] for a, b in share] for p, share in zip(pieces, shares, strict=True)]
    assert texts == [[b"k1\tv1", b"k2"], [b"\tv2"], [b"k3\tv3"]]
    assert piece_rows(content, (), pieces) == [(), (), ()]
