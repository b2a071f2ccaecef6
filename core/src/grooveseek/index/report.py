"""What ``groove index`` writes to stderr while it runs (SPEC R4.36, R8.10; docs/cli.md, "Progress").

Per-file lines are shown by default; ``quiet`` drops them and ``stages=False`` the stage lines too
(``groove index --quiet`` sets both: warnings and errors only, issue 24). With ``progress`` (the
default on a terminal, ``--progress`` elsewhere) a ``RunProgress`` follows the run: its phase
(reading; lexical, pass 1, files parsed and written without vectors; vectors, pass 2, the pending
chunks embedded; issue 26), files n/N, chunks n/N, chunks/s and an ETA, shown as one
live rich display on a terminal, else as a ``Progress:`` line every few seconds plus a final one.
The live display replaces the per-file lines; warnings and ``Skipping`` lines are never suppressed.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import attrs
from rich.progress import BarColumn, Progress, ProgressColumn, Task, TaskID, TextColumn
from rich.text import Text

from ..console import echo_err, err_console
from ..names import shown

__all__ = ["LINE_INTERVAL_S", "Reporter", "RunLines", "RunProgress"]

# Seconds between two ``Progress:`` lines when stderr is not a terminal.
LINE_INTERVAL_S = 5.0
# Writes closer together than this after the first are one batch's burst (see ``RunProgress.wrote``).
BURST_S = 0.5


def _duration(seconds: float) -> str:
    seconds = int(seconds + 0.5)
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


@attrs.define
class RunProgress:
    """Where one run is: the phase, files and chunks done against their totals, and the chunk rate.

    ``files`` counts the files this run must read (phase ``reading``), then those it must index; a
    file counts once written, refreshed or skipped. The chunk total is exact once every such file
    is parsed; before that it is estimated from the chunks per file parsed so far (shown ``~``).
    The rate is measured from the end of the first batch's writes, so the model load and that
    batch do not count against it; the final line gives the run's average.
    """

    clock: Callable[[], float] = time.monotonic
    phase: str = "starting"
    files_total: int = 0
    files_done: int = 0
    written: int = 0
    todo: frozenset[str] = frozenset()
    parsed: int = 0
    chunks_parsed: int = 0
    chunks_done: int = 0
    first_write: tuple[float, int] | None = None  # (when, chunks done then)
    started: float = 0.0  # when the indexing phase began
    #: Phase ``vectors``: the chunks pass 2 must embed (exact), and how many it has stored.
    vectors_total: int = 0
    #: After an interrupt: the index's documents and its chunks still without a vector (None: unknown).
    documents: int = 0
    vectors_left: int | None = None

    def chunks_total(self) -> tuple[int, bool]:
        """(the chunk total, whether it is exact)."""
        if self.phase == "vectors" or (self.phase == "done" and self.vectors_total):
            return self.vectors_total, True
        left = self.files_total - self.parsed
        if self.phase == "reading" or left <= 0 or not self.parsed:
            return self.chunks_parsed, self.phase != "reading" and left <= 0
        return self.chunks_parsed + round(left * self.chunks_parsed / self.parsed), False

    def wrote(self) -> None:
        """A file's chunks were written: the first batch's files, written in one burst after its
        embedding, all move the anchor; the rate counts from the end of that burst."""
        now = self.clock()
        if self.first_write is None or now - self.first_write[0] < BURST_S:
            self.first_write = (now, self.chunks_done)

    def rate(self) -> float | None:
        now = self.clock()
        if self.phase == "done":  # the run's own average, model load included
            elapsed = now - self.started
            return self.chunks_done / elapsed if elapsed > 0 and self.chunks_done else None
        if self.first_write is None:
            return None
        since, base = self.first_write
        elapsed = now - since
        return (self.chunks_done - base) / elapsed if elapsed >= 1.0 and self.chunks_done > base else None

    def detail(self) -> str:
        """``files 27/179 (15%), chunks 512/~3570, 41.2 chunks/s, ETA 1m14s``."""
        percent = (self.files_done * 100) // max(self.files_total, 1) if self.files_total else 100
        parts = [f"files {self.files_done}/{self.files_total} ({percent}%)"]
        if self.phase != "reading":
            total, exact = self.chunks_total()
            parts.append(f"chunks {self.chunks_done}/{'' if exact else '~'}{total}")
            rate = self.rate()
            parts.append(f"{rate:.1f} chunks/s" if rate is not None else "-- chunks/s")
            if self.phase == "done":
                parts.append("ETA 0s")
            elif rate:
                parts.append(f"ETA {_duration(max(total - self.chunks_done, 0) / rate)}")
            else:
                parts.append("ETA --")
        return ", ".join(parts)

    def line(self) -> str:
        return f"Progress: {self.phase}, {self.detail()}"


class _DetailColumn(ProgressColumn):
    """The live display's text, computed at each refresh so the rate and ETA stay current."""

    def __init__(self, status: RunProgress) -> None:
        super().__init__()
        self.status = status

    def render(self, task: Task) -> Text:
        return Text(self.status.detail())


class Reporter:
    """Collects the run's stderr lines; ``sink`` replaces the console (used by MCP and tests)."""

    def __init__(
        self,
        *,
        quiet: bool = False,
        progress: bool = False,
        sink: Callable[[str], None] | None = None,
        stages: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.quiet = quiet
        self.stages = stages
        self.show_progress = progress
        self.status = RunProgress(clock=clock)
        self._sink = sink
        self._bar: Progress | None = None
        self._task: TaskID | None = None
        self._last_line: float | None = None
        self._counted: set[str] = set()
        self.lines: list[str] = []

    def _emit(self, message: str) -> None:
        self.lines.append(message)
        if self._sink is not None:
            self._sink(message)
        elif self._bar is not None:
            self._bar.console.print(message, markup=False, highlight=False)
        else:
            echo_err(message)

    def stage(self, message: str) -> None:
        if self.stages:
            self._emit(message)
        else:
            self.lines.append(message)

    def file_line(self, message: str) -> None:
        if not self.quiet and not self.show_progress:
            self._emit(message)

    def warn(self, message: str) -> None:
        self._emit(message)

    # -- the run's progress ----------------------------------------------------------------------
    def reading(self, total: int) -> None:
        """The run reads and hashes ``total`` files (``read_one`` after each)."""
        self.status.phase, self.status.files_total, self.status.files_done = "reading", total, 0
        self._start()
        self._tick()

    def read_one(self) -> None:
        self.status.files_done += 1
        self._tick()

    def indexing(self, todo: set[str]) -> None:
        """The run indexes the files ``todo`` (new, changed, or of a parser that changed)."""
        status = self.status
        status.phase, status.todo, status.started = "lexical", frozenset(todo), status.clock()
        status.files_total, status.files_done = len(todo), 0
        self._start()
        self._tick(force=True)

    def phase(self, name: str) -> None:
        self.status.phase = name

    def parsed(self, chunks: int) -> None:
        """One file of the run parsed into ``chunks`` chunks to write (0: nothing to embed)."""
        self.status.parsed += 1
        self.status.chunks_parsed += chunks
        self._tick()

    def lexical_done(self) -> None:
        """Pass 1 is over: every file of the run is written (or skipped), searchable by keyword."""
        self.status.files_done = self.status.files_total
        self._tick(force=True)

    def vectors(self, total: int) -> None:
        """Pass 2 embeds ``total`` pending chunks (``filled`` after each stored batch)."""
        status = self.status
        status.phase, status.vectors_total, status.chunks_done = "vectors", total, 0
        status.first_write, status.started = None, status.clock()
        self._start()
        self._tick(force=True)

    def filled(self, chunks: int) -> None:
        status = self.status
        status.chunks_done += chunks
        status.wrote()
        self._tick()

    def settled(self, rel: str, chunks: int = 0, *, written: bool = False) -> None:
        """File ``rel`` is done: written with ``chunks`` embedded chunks, refreshed or skipped."""
        status = self.status
        if rel not in status.todo or rel in self._counted:
            return
        self._counted.add(rel)
        status.files_done += 1
        status.written += int(written)
        status.chunks_done += chunks
        if chunks:
            status.wrote()
        self._tick()

    def _start(self) -> None:
        if not self.show_progress or self._sink is not None or self._bar is not None:
            return
        console = err_console()
        if console.is_terminal:
            self._bar = Progress(
                TextColumn("{task.description:<17}"),
                BarColumn(bar_width=30),
                _DetailColumn(self.status),
                console=console,
                transient=False,
            )
            self._bar.start()
            self._task = self._bar.add_task(self.status.phase, total=None)

    def _tick(self, *, force: bool = False) -> None:
        if not self.show_progress:
            return
        status = self.status
        if self._bar is not None:
            assert self._task is not None  # set with _bar
            total = status.files_total or None
            self._bar.update(self._task, description=status.phase, completed=status.files_done, total=total)
            return
        now = status.clock()
        if force or self._last_line is None or now - self._last_line >= LINE_INTERVAL_S:
            self._last_line = now
            self._emit(status.line())

    def finish(self) -> None:
        """End the run's progress: everything to do is done; the last line (or screen) says N/N."""
        status = self.status
        status.phase = "done"
        status.files_done = status.files_total
        status.parsed = max(status.parsed, status.files_total)
        self._tick(force=True)
        self._stop()

    def _stop(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def interrupted(self, *, rebuilt_aside: bool) -> str:
        """Stop the display and say what an interrupted run kept (the CLI exits 130 after it)."""
        self._stop()
        status = self.status
        if rebuilt_aside:
            return (
                f"Interrupted: the rebuild stopped after {status.written} of {status.files_total} "
                "files; the index is as it was before it (run groove index --force again)"
            )
        if status.phase == "vectors" and status.vectors_left:
            return (
                f"Interrupted: {status.documents} documents searchable by keyword; "
                f"{status.vectors_left} chunks still wait for vectors; the next `groove index` fills them"
            )
        if status.phase in {"starting", "reading"} or not status.written:
            return "Interrupted: no file was written; the next run starts again"
        return (
            f"Interrupted: {status.written} of {status.files_total} files written; "
            "the next run continues from there"
        )


class RunLines:
    """How ``groove index`` and ``rebuild_index`` word per-file outcomes (R4.18, R4.22, R4.24, R4.26)."""

    def __init__(self, reporter: Reporter) -> None:
        self.reporter = reporter

    def indexed(self, rel: str, chunks: int, *, metadata_only: bool = False) -> None:
        extra = ", metadata only" if metadata_only else ""
        self.reporter.settled(rel, 0 if metadata_only else chunks, written=True)
        self.reporter.file_line(f"  indexed: {shown(rel)} ({chunks} chunks{extra})")

    def renamed(self, old: str, new: str) -> None:
        self.reporter.file_line(f"  renamed: {shown(old)} -> {shown(new)}")

    def deleted(self, rel: str) -> None:
        self.reporter.settled(rel)
        self.reporter.file_line(f"  deleted: {shown(rel)}")

    def skipped(self, rel: str, reason: str) -> None:
        self.reporter.settled(rel)
        self.reporter.warn(f"Skipping {shown(rel)}: {reason}")  # never suppressed (R4.24)

    def rejected(self, rel: str, status: int) -> None:
        """R5.16: the endpoint refused this file's input; the status only, never the body."""
        self.reporter.settled(rel)
        self.reporter.warn(
            f"warning: {shown(rel)}: embedding endpoint rejected the input (HTTP {status}); skipped: "
            "its text is searchable by keyword, its vectors are tried again by the next run"
        )
