"""What ``groove index`` writes to stderr while it runs (SPEC R4.36, R8.10).

Per-file lines are shown by default; ``quiet`` drops them and ``stages=False`` the stage lines too
(``groove index --quiet`` sets both: warnings and errors only, issue 24);
``--progress`` shows a rich bar on a terminal, else about 20 ``Progress: N/M (P%)`` lines.
Warnings and ``Skipping`` lines are never suppressed.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TaskProgressColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from ..console import echo_err, err_console
from ..names import shown


class Reporter:
    """Collects the run's stderr lines; ``sink`` replaces the console (used by MCP and tests)."""

    def __init__(
        self,
        *,
        quiet: bool = False,
        progress: bool = False,
        sink: Callable[[str], None] | None = None,
        stages: bool = True,
    ):
        self.quiet = quiet
        self.stages = stages
        self.show_progress = progress
        self._sink = sink
        self._bar: Progress | None = None
        self._task: TaskID | None = None
        self._last_step = -1
        self._total = 0
        # Whether the line for done == total was printed; finish() owes it otherwise (R8.10).
        self._final_printed = False
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

    def start(self, total: int) -> None:
        self._total = total
        if not self.show_progress or self._sink is not None:
            return
        console = err_console()
        if console.is_terminal:
            self._bar = Progress(
                BarColumn(),
                MofNCompleteColumn(),
                TaskProgressColumn(),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                console=console,
                transient=True,
            )
            self._bar.start()
            self._task = self._bar.add_task("indexing", total=total)

    def advance(self, done: int, total: int) -> None:
        if not self.show_progress:
            return
        if self._bar is not None:
            assert self._task is not None  # set with _bar
            self._bar.update(self._task, completed=done)
            return
        step = (done * 20) // max(total, 1)
        if step != self._last_step or done == total:
            self._last_step = step
            self._final_printed = done == total
            self._emit(f"Progress: {done}/{total} ({(done * 100) // max(total, 1)}%)")

    def finish(self) -> None:
        """End the run's progress. Without a bar the lines must end at 100% (R8.10) even when
        ``advance`` never reached the total, as on an empty knowledge base."""
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
        elif self.show_progress and not self._final_printed:
            self._final_printed = True
            self._emit(f"Progress: {self._total}/{self._total} (100%)")


class RunLines:
    """How ``groove index`` and ``rebuild_index`` word per-file outcomes (R4.18, R4.22, R4.24, R4.26)."""

    def __init__(self, reporter: Reporter) -> None:
        self.reporter = reporter

    def indexed(self, rel: str, chunks: int, *, metadata_only: bool = False) -> None:
        extra = ", metadata only" if metadata_only else ""
        self.reporter.file_line(f"  indexed: {shown(rel)} ({chunks} chunks{extra})")

    def renamed(self, old: str, new: str) -> None:
        self.reporter.file_line(f"  renamed: {shown(old)} -> {shown(new)}")

    def deleted(self, rel: str) -> None:
        self.reporter.file_line(f"  deleted: {shown(rel)}")

    def skipped(self, rel: str, reason: str) -> None:
        self.reporter.warn(f"Skipping {shown(rel)}: {reason}")  # never suppressed (R4.24)

    def rejected(self, rel: str, status: int) -> None:
        """R5.16: the endpoint refused this file's input; the status only, never the body."""
        self.reporter.warn(
            f"warning: {shown(rel)}: embedding endpoint rejected the input (HTTP {status}); skipped, "
            "the index keeps what it had for this file"
        )
