"""The index run's stderr reporter (SPEC R8.10): the Progress lines, through a sink."""

from __future__ import annotations

from grooveseek.index.report import Reporter


def test_progress_on_an_empty_run_ends_with_a_100_percent_line():
    lines: list[str] = []
    reporter = Reporter(progress=True, sink=lines.append)
    reporter.start(0)
    reporter.finish()
    assert lines == ["Progress: 0/0 (100%)"]


def test_progress_final_line_is_printed_once():
    lines: list[str] = []
    reporter = Reporter(progress=True, sink=lines.append)
    reporter.start(3)
    for done in range(1, 4):
        reporter.advance(done, 3)
    reporter.finish()
    assert lines[-1] == "Progress: 3/3 (100%)"
    assert lines.count("Progress: 3/3 (100%)") == 1


def test_finish_without_progress_prints_nothing():
    lines: list[str] = []
    reporter = Reporter(sink=lines.append)
    reporter.start(0)
    reporter.finish()
    assert lines == []
