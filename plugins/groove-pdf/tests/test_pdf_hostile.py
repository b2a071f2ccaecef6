"""Hostile PDFs (issue 12's hostile set): each is skipped with a named reason, the run goes on.

The files are written by the test and stay small on disk (the 100 MB page is a few hundred KB of
Flate). The extraction timeout is lowered for the test so it proves the worker is killed without
waiting 120 s.
"""

from __future__ import annotations

import os
import signal

import pytest
from groove_pdf import worker
from groove_pdf.parser import PdfParser

from grooveseek import ParseError
from grooveseek.testing import recording_parse_context

LINE = "Quarterly maintenance windows are announced two weeks before the switchover happens."


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_timeout_kills_the_extraction_worker_and_the_next_file_still_parses(pdfgen, monkeypatch):
    parser = PdfParser()
    ctx = recording_parse_context()
    parser.parse(pdfgen.text_pdf([[LINE]]), "warm.pdf", ctx)  # the worker is up and pypdf imported
    busy_pid = worker.WORKER.pid
    assert busy_pid is not None
    monkeypatch.setattr(worker, "TIMEOUT_SECONDS", 1.0)
    # About 2.7 MB of drawing operators on one page: pypdf needs many seconds for it.
    with pytest.raises(ParseError, match=r"^PDF text extraction exceeded 1 s$"):
        parser.parse(pdfgen.dense_page_pdf(40_000), "slow.pdf", ctx)
    assert not _alive(busy_pid)  # killed and reaped: the work really stopped
    monkeypatch.setattr(worker, "TIMEOUT_SECONDS", 120.0)
    doc = parser.parse(pdfgen.text_pdf([[LINE]]), "after.pdf", ctx)
    assert doc.sections[0].text == LINE
    assert worker.WORKER.pid != busy_pid


def test_hundred_megabyte_page_is_refused_by_the_budget_without_inflating_it(pdfgen):
    data = pdfgen.huge_text_page_pdf(100)
    assert len(data) < 1_000_000
    with pytest.raises(ParseError) as info:
        PdfParser().parse(data, "big.pdf", recording_parse_context())
    message = str(info.value)
    assert message.startswith("over the decompression budget: page 1's content stream inflates past 52428800")
    assert "[index].max_decompressed_size" in message


def test_hostile_pdfs_are_skipped_by_name_and_the_rest_indexes(pdfgen, plugin_roundtrip):
    good = pdfgen.text_pdf([[LINE, "The rollback plan keeps the old cluster warm for a week."]])
    trip = plugin_roundtrip(
        {
            "notes/readme.md": "# Notes\n\nThe maintenance calendar lives in the PDF next to this note.\n",
            "docs/good.pdf": good,
            "hostile/encrypted.pdf": pdfgen.encrypted_pdf([[LINE]]),
            "hostile/deep-tree.pdf": pdfgen.deep_page_tree_pdf(10_000),
            "hostile/deep-array.pdf": pdfgen.deep_array_pdf(10_000),
            "hostile/huge-page.pdf": pdfgen.huge_text_page_pdf(100),
            "hostile/truncated.pdf": good[: len(good) // 2],
        },
        ["md", "pdf"],
    )
    assert trip.summary.updated == 2
    assert trip.summary.skipped == 5
    count, skips = trip.skipped()
    reasons = dict(skips)
    assert count == 5
    assert reasons["hostile/encrypted.pdf"] == "encrypted PDF; password-protected files are not supported"
    assert reasons["hostile/huge-page.pdf"].startswith("over the decompression budget")
    assert reasons["hostile/deep-tree.pdf"].startswith("parse failed: LimitReachedError")
    # pypdf stops reading the page dictionary at the nesting, so the page has no text left.
    assert reasons["hostile/deep-array.pdf"].startswith("too little text to index (0 chars/page")
    assert reasons["hostile/truncated.pdf"].startswith("not a readable PDF")
    hits = trip.search("rollback plan old cluster warm").results
    assert hits[0].path == "docs/good.pdf"


def _broken_startxref(data: bytes) -> bytes:
    """The same PDF with its ``startxref`` offset wrong: pypdf logs a warning and repairs it."""
    head, _, tail = data.rpartition(b"startxref")
    offset = int(tail.split()[0])
    return head + b"startxref\n" + str(offset + 7).encode() + b"\n%%EOF\n"


def test_pypdf_log_lines_become_warnings_naming_the_file(pdfgen, capfd):
    """Issue 21: pypdf's own log lines ("incorrect startxref pointer") reached stderr raw from the
    worker, naming no file; now each is a warning of this file, through the indexer's ``warn``."""
    ctx = recording_parse_context()
    doc = PdfParser().parse(_broken_startxref(pdfgen.text_pdf([[LINE]])), "manuals/broken.pdf", ctx)
    assert doc.sections[0].text == LINE
    assert any(w.startswith("manuals/broken.pdf: pypdf") and "startxref" in w for w in ctx.warnings), (
        ctx.warnings
    )
    PdfParser().parse(pdfgen.text_pdf([[LINE]]), "x.pdf", recording_parse_context())  # a round trip
    assert "startxref" not in capfd.readouterr().err


def test_log_lines_are_bounded_per_file():
    handler = worker._Collected()
    for n in range(worker.MAX_LOG_LINES + 500):
        handler.add(f"line {n}")
    lines = handler.take()
    assert len(lines) == worker.MAX_LOG_LINES + 1 and lines[-1] == "... and 500 more log lines"
    assert handler.take() == []


def test_ctrl_c_does_not_kill_the_worker_or_print_its_traceback(pdfgen, capfd):
    """Issue 21: a Ctrl-C reached the worker too, and multiprocessing printed its traceback raw."""
    parser = PdfParser()
    parser.parse(pdfgen.text_pdf([[LINE]]), "warm.pdf", recording_parse_context())
    pid = worker.WORKER.pid
    assert pid is not None
    os.kill(pid, signal.SIGINT)
    doc = parser.parse(pdfgen.text_pdf([[LINE]]), "after.pdf", recording_parse_context())
    assert doc.sections[0].text == LINE
    assert worker.WORKER.pid == pid  # the same worker answered: Ctrl-C is the indexer's to handle
    err = capfd.readouterr().err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
