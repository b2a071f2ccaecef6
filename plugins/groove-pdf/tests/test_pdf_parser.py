"""The PDF parser's rules (SPEC §3.5), pinned on PDFs the tests write themselves (``pdfgen``)."""

from __future__ import annotations

import pytest
from groove_pdf import textfix
from groove_pdf.parser import PdfParser

from grooveseek import ParseError
from grooveseek.testing import check_parser, recording_parse_context

LINE = "The migration plan moves every service to the new cluster before the spring release."


def parse(data: bytes, rel: str = "docs/report.pdf", **limits):
    ctx = recording_parse_context(**limits)
    return PdfParser().parse(data, rel, ctx), ctx.warnings


def test_contract(pdfgen):
    check_parser(PdfParser(), pdfgen.text_pdf([[LINE]]), "a/b.pdf", garbage=b"not a pdf at all")


def test_one_section_per_page_with_text_headed_p_n(pdfgen):
    data = pdfgen.text_pdf([[LINE, "second line"], [], ["Page three talks about " + LINE]])
    doc, _ = parse(data)
    assert [s.heading for s in doc.sections] == ["p.1", "p.3"]  # the empty page 2 makes no chunk
    assert all(s.level is None for s in doc.sections)
    assert doc.sections[0].text == f"{LINE}\nsecond line"
    assert doc.read_text == f"{LINE}\nsecond line\n\nPage three talks about {LINE}"


def test_title_and_creation_date_from_metadata(pdfgen):
    doc, _ = parse(pdfgen.text_pdf([[LINE]], title=b"(Cluster migration)", date="D:20260314093000+09'00'"))
    assert (doc.title, doc.date) == ("Cluster migration", "2026-03-14")


@pytest.mark.parametrize("title", [None, b"()", b"(   )"])
def test_missing_or_empty_title_falls_back_to_the_file_name(pdfgen, title):
    doc, _ = parse(pdfgen.text_pdf([[LINE]], title=title), "reports/q3_cluster-plan.pdf")
    assert doc.title == "q3 cluster plan"
    assert doc.date is None


def test_meaningless_title_is_kept(pdfgen):
    doc, _ = parse(pdfgen.text_pdf([[LINE]], title=b"(Microsoft Word - Document1.docx)"))
    assert doc.title == "Microsoft Word - Document1.docx"


def test_utf16be_title_with_bom_is_read_as_written(pdfgen):
    # The PDF form of a non-ASCII title (R3.33): pypdf honours the BOM, so no repair is needed here.
    hex_title = b"<feff" + "移行計画 Plan".encode("utf-16-be").hex().encode() + b">"
    doc, _ = parse(pdfgen.text_pdf([[LINE]], title=hex_title))
    assert doc.title == "移行計画 Plan"


def test_title_repair_rules():
    # R3.33: what a library that decodes UTF-16BE byte by byte would hand over, and its repair.
    mojibake = "\u00fe\u00ff" + "移行計画".encode("utf-16-be").decode("latin-1")
    assert textfix.repair_title(mojibake) == "移行計画"
    assert textfix.repair_title("\u00fe\u00ff\u0000T\u0000o") == "To"
    assert textfix.repair_title("\u0000T\u0000o") == "To"  # NULs without the BOM
    assert textfix.repair_title("plain title") == "plain title"
    assert textfix.repair_title("bad \u0085 title\u20ac") is None  # not Latin-1: cannot be recovered
    assert textfix.repair_title("\u0000\u0001\u0000\u0002") is None  # recovers to control characters
    assert textfix.repair_title("") is None


def test_encrypted_pdf_is_skipped_with_the_spec_message(pdfgen):
    with pytest.raises(ParseError, match=r"^encrypted PDF; password-protected files are not supported$"):
        parse(pdfgen.encrypted_pdf([[LINE]]))


def test_hyphen_joined_only_between_lowercase_ascii_letters(pdfgen):
    data = pdfgen.text_pdf([[f"{LINE} A well-", "known fact: part A-", "12 and 2026-", "03 stay apart."]])
    doc, _ = parse(data)
    text = doc.sections[0].text
    assert "wellknown fact" in text
    assert "A-\n12" in text
    assert "2026-\n03" in text


def test_ligatures_and_hyphen_rule_on_text():
    assert (
        textfix.clean_page("\ufb01ne \ufb02ow o\ufb00 e\ufb03cient ba\ufb04e")
        == "fine flow off efficient baffle"
    )
    assert textfix.clean_page("co-\nop X-\nray re-\nUse 東-\n京") == "coop X-\nray re-\nUse 東-\n京"


def test_japanese_with_tounicode_extracts(pdfgen):
    text = (
        "日本語の検索テストです。ひらがな、カタカナ、漢字を含む文章です。\n"
        "二行目にも十分な長さの日本語があります。"
    )
    doc, _ = parse(pdfgen.tounicode_japanese_pdf(text))
    assert doc.sections[0].text == text


@pytest.mark.parametrize("indirect", [False, True])
def test_japanese_cid_keyed_without_tounicode_extracts(pdfgen, indirect):
    text = (
        "これは日本語のテキストです。ひらがなとカタカナ、漢字を含みます。\n"
        "東京都の天気は晴れ。明日の会議は午後三時から始まります。"
    )
    data = pdfgen.reportlab_japanese_pdf(text, indirect_descendant=indirect)
    doc, _ = parse(data)
    assert doc.sections[0].text == text


def test_mojibake_gate_names_the_decoding_failure(pdfgen):
    # UTF-16BE bytes of kana shown through a one-byte font: あいう... reads as 0B0D0F...
    kana = "".join(chr(c) for c in range(0x3042, 0x3042 + 60))
    garbled = kana.encode("utf-16-be").decode("latin-1")
    data = pdfgen.text_pdf([[garbled[i : i + 40] for i in range(0, len(garbled), 40)]])
    with pytest.raises(ParseError) as info:
        parse(data)
    assert str(info.value) == textfix.MOJIBAKE_REASON
    assert "chars/page" not in str(info.value)


def test_mojibake_measures():
    assert textfix.utf16_pair_share("0B0D0F0H") == 1.0
    assert textfix.utf16_pair_share("ordinary English text") == 0.0
    assert textfix.is_mojibake("x" * 98 + "\u0085\u0086")
    assert not textfix.is_mojibake("x" * 200 + "\u0085")
    assert not textfix.is_mojibake("Version 0A of the form, 0B next")


def test_density_gate_refuses_a_scan_like_file(pdfgen):
    data = pdfgen.text_pdf([["Page 1 of 3", "ACME Corp internal"], ["Page 2 of 3"], ["Page 3 of 3"]])
    with pytest.raises(ParseError) as info:
        parse(data)
    assert str(info.value).startswith("too little text to index (")
    assert "chars/page, minimum 50); scanned PDFs need OCR, which GrooveSeek does not do" in str(info.value)


def test_page_text_cap_truncates_with_a_warning_naming_the_page(pdfgen, monkeypatch):
    from groove_pdf import worker

    monkeypatch.setattr(worker, "PAGE_TEXT_CAP", 200)
    doc, warnings = parse(pdfgen.text_pdf([[LINE], [LINE] * 8], title=b"(T)"), "x/cap.pdf")
    assert len(doc.sections[1].text.encode()) <= 200
    assert doc.sections[0].text == LINE
    assert warnings == ["x/cap.pdf: page 2: text truncated at 200 bytes"]


def test_extracted_text_counts_against_max_decompressed_size(pdfgen):
    data = pdfgen.text_pdf([[LINE] * 5] * 4)
    with pytest.raises(ParseError, match=r"\[index\]\.max_decompressed_size"):
        parse(data, max_decompressed_size=1000)
    doc, _ = parse(data, max_decompressed_size=100_000)
    assert len(doc.sections) == 4


def test_read_side_refusal_names_the_read_budget(pdfgen):
    ctx = recording_parse_context(max_decompressed_size=1000)
    with pytest.raises(ParseError) as info:
        PdfParser().parse_for_read(pdfgen.text_pdf([[LINE] * 5] * 4), "a.pdf", ctx)
    assert "read-side 50 MiB decompression budget of get_document" in str(info.value)
    assert "[index]." not in str(info.value).split("(")[0]


def test_not_a_pdf_is_a_named_failure():
    with pytest.raises(ParseError, match="not a readable PDF"):
        parse(b"%PDF-1.7\nthis is not really a PDF")
