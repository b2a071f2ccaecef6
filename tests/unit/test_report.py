"""The index run's stderr reporter (SPEC R8.10, issue 26 item 4): the Progress lines through a sink,
the chunk estimate, the rate and ETA on a fake clock, and what an interrupted run says it kept."""

from __future__ import annotations

from grooveseek.index.report import LINE_INTERVAL_S, Reporter, RunLines


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _reporter(clock: Clock, **kwargs: bool) -> tuple[Reporter, list[str]]:
    lines: list[str] = []
    return Reporter(progress=True, sink=lines.append, clock=clock, **kwargs), lines


def test_an_empty_run_ends_with_a_done_line() -> None:
    reporter, lines = _reporter(Clock())
    reporter.reading(0)
    reporter.indexing(set())
    reporter.finish()
    assert lines[-1] == "Progress: done, files 0/0 (100%), chunks 0/0, -- chunks/s, ETA 0s"


def test_lines_come_every_few_seconds_and_end_at_every_file_and_chunk() -> None:
    clock = Clock()
    reporter, lines = _reporter(clock)
    run = RunLines(reporter)
    reporter.reading(4)
    for _ in range(4):
        reporter.read_one()
    assert lines == ["Progress: reading, files 0/4 (0%)"]  # no clock time passed: one line
    reporter.indexing({"a.md", "b.md", "c.md", "d.md"})
    assert lines[-1] == "Progress: lexical, files 0/4 (0%), chunks 0/~0, -- chunks/s, ETA --"
    reporter.parsed(10)
    reporter.parsed(30)  # two of four files parsed, 20 chunks a file: about 80 in all
    run.indexed("a.md", 10)
    clock.now += 2.0
    run.indexed("b.md", 30)  # 30 chunks in 2 s since the first write
    clock.now += LINE_INTERVAL_S
    run.skipped("c.md", "not valid UTF-8")
    assert lines[-2:] == [
        "Progress: lexical, files 3/4 (75%), chunks 40/~80, 4.3 chunks/s, ETA 9s",
        "Skipping c.md: not valid UTF-8",
    ]
    reporter.parsed(0)
    reporter.parsed(5)
    run.indexed("d.md", 5)
    reporter.finish()
    assert lines[-1].startswith("Progress: done, files 4/4 (100%), chunks 45/45, ")
    assert lines[-1].endswith(", ETA 0s")
    assert not any(line.startswith("  indexed:") for line in lines)  # progress replaces them


def test_a_file_counts_once_and_only_when_the_run_had_to_index_it() -> None:
    reporter, _ = _reporter(Clock())
    run = RunLines(reporter)
    reporter.indexing({"a.md"})
    run.skipped("elsewhere.md", "too big")  # refused at the read: not one of the run's files
    run.indexed("a.md", 3)
    run.indexed("a.md", 3)
    assert (reporter.status.files_done, reporter.status.written, reporter.status.chunks_done) == (1, 1, 3)


def test_without_progress_the_per_file_lines_print_and_no_progress_line() -> None:
    lines: list[str] = []
    reporter = Reporter(sink=lines.append)
    reporter.reading(1)
    reporter.indexing({"a.md"})
    RunLines(reporter).indexed("a.md", 2)
    reporter.finish()
    assert lines == ["  indexed: a.md (2 chunks)"]


def test_an_interrupt_says_what_was_kept() -> None:
    reporter, _ = _reporter(Clock())
    reporter.reading(3)
    assert reporter.interrupted(rebuilt_aside=False) == (
        "Interrupted: no file was written; the next run starts again"
    )
    reporter.indexing({"a.md", "b.md", "c.md"})
    assert reporter.interrupted(rebuilt_aside=False) == (
        "Interrupted: no file was written; the next run starts again"
    )
    RunLines(reporter).indexed("a.md", 2)
    assert reporter.interrupted(rebuilt_aside=False) == (
        "Interrupted: 1 of 3 files written; the next run continues from there"
    )
    assert reporter.interrupted(rebuilt_aside=True) == (
        "Interrupted: the rebuild stopped after 1 of 3 files; the index is as it was before it "
        "(run groove index --force again)"
    )


def test_the_rate_counts_from_the_end_of_the_first_batchs_burst() -> None:
    clock = Clock()
    reporter, _ = _reporter(clock)
    run = RunLines(reporter)
    reporter.indexing({"a.md", "b.md", "c.md"})
    run.indexed("a.md", 6)
    clock.now += 0.01
    run.indexed("b.md", 58)  # the same batch, written right after the first file
    assert reporter.status.rate() is None
    clock.now += 4.0
    run.indexed("c.md", 64)  # the next batch, 4 s later
    assert reporter.status.rate() == 16.0


def test_the_vectors_phase_counts_pending_chunks_and_an_interrupt_there_says_what_waits() -> None:
    clock = Clock()
    reporter, lines = _reporter(clock)
    run = RunLines(reporter)
    reporter.indexing({"a.md", "b.md"})
    reporter.parsed(10)
    run.indexed("a.md", 10)
    reporter.parsed(20)
    run.indexed("b.md", 20)
    reporter.lexical_done()
    reporter.vectors(30)
    assert lines[-1] == "Progress: vectors, files 2/2 (100%), chunks 0/30, -- chunks/s, ETA --"
    reporter.filled(10)
    clock.now += LINE_INTERVAL_S
    reporter.filled(10)
    assert lines[-1] == "Progress: vectors, files 2/2 (100%), chunks 20/30, 2.0 chunks/s, ETA 5s"
    reporter.status.documents, reporter.status.vectors_left = 2, 10
    assert reporter.interrupted(rebuilt_aside=False) == (
        "Interrupted: 2 documents searchable by keyword; 10 chunks still wait for vectors; "
        "the next `groove index` fills them"
    )
