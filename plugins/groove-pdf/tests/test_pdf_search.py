"""groove-pdf end to end: index a PDF with the real model, find a sentence, read the document back."""

from __future__ import annotations

SENTENCES = [
    [
        "The lighthouse keeper logs the wind speed every evening at nine o'clock.",
        "Storm warnings are raised when gusts pass forty knots on the northern pier.",
    ],
    [
        "Supply boats arrive on the first Monday of each month with fuel and food.",
        "The keeper signs the delivery ledger and checks the diesel level of the generator.",
    ],
]


def test_search_finds_a_pdf_sentence_with_its_page_and_get_document_reads_it(pdfgen, plugin_roundtrip):
    data = pdfgen.text_pdf(SENTENCES, title=b"(Lighthouse operations)", date="D:20250701")
    trip = plugin_roundtrip(
        {"ops/lighthouse.pdf": data, "ops/notes.md": "# Notes\n\nNothing about boats."}, ["md", "pdf"]
    )
    assert trip.summary.skipped == 0
    hit = trip.search("who signs the delivery ledger for the diesel").results[0]
    assert (hit.path, hit.heading, hit.title, hit.date) == (
        "ops/lighthouse.pdf",
        "p.2",
        "Lighthouse operations",
        "2025-07-01",
    )
    assert "delivery ledger" in hit.content
    doc = trip.get_document("ops/lighthouse.pdf")
    assert doc["title"] == "Lighthouse operations"
    assert doc["truncated"] is False
    assert doc["content"] == "\n".join(SENTENCES[0]) + "\n\n" + "\n".join(SENTENCES[1])


def test_the_binary_raw_cap_applies_to_pdfs(pdfgen, plugin_roundtrip):
    data = pdfgen.text_pdf(SENTENCES * 3)
    trip = plugin_roundtrip(
        {"ops/big.pdf": data, "ops/notes.md": "# Notes\n\nA short note that stays under every cap."},
        ["md", "pdf"],
        index={"max_binary_file_size": 1000, "max_text_file_size": "1 MiB"},
    )
    assert trip.summary.updated == 1
    ((path, reason),) = trip.skipped()[1]
    assert path == "ops/big.pdf"
    assert (
        reason == f"binary file too large ({len(data)} bytes > 1000 byte limit, [index].max_binary_file_size)"
    )
