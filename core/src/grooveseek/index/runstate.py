"""What one index run (or watcher batch) carries between its stages: counters, lines, the file guard.

``RunState`` is the mutable record the stages write into: the R4.34 counters, the paths settled
this run (R4.38) and the wording of per-file lines (``RunLines`` for a run, the watcher's own for a
batch). ``FileGuard`` is the one place where whatever a file's read, parse, chunking, embedding or
write raises becomes ``Skipping <rel>: <reason>`` and the run goes on (R3.7, R4.24). Only the run's
own failures pass through: an interrupt, the model failing a probe text too (``RunFailed``), and
the index itself failing, which the store recognises (``IndexStore.is_failure``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import attrs

from ..store.interface import IndexStore
from .report import RunLines
from .safety import RunFailed, failure_reason

__all__ = ["FileGuard", "RunCounters", "RunState"]


@attrs.define
class RunCounters:
    updated: int = 0
    renamed: int = 0
    deleted: int = 0
    skipped: int = 0
    frontmatter_unparsed: int = 0
    unparsed_paths: list[str] = attrs.Factory(list)
    skips: list[tuple[str, str]] = attrs.Factory(list)  # (path, reason), for a later doctor
    rejected_paths: list[str] = attrs.Factory(list)  # refused by an embedding endpoint (R5.16)
    accepted_batches: int = 0  # embedding calls the endpoint accepted (R5.17)


@attrs.define
class RunState:
    """The per-run record every stage writes into."""

    lines: RunLines
    counts: RunCounters = attrs.Factory(RunCounters)
    #: Paths written, refreshed or removed this run (R4.38): a stale-parser file not in here is
    #: marked ``awaiting-reparse`` at the end of the run.
    settled: set[str] = attrs.Factory(set)
    #: A file the R4.40 pass could not re-read: the declared-field set is not recorded this run.
    fields_unsettled: bool = False

    def skip(self, rel: str, reason: str) -> None:
        """Count and report one skipped file; its rows stay as they were (R4.24)."""
        self.counts.skipped += 1
        self.counts.skips.append((rel, reason))
        self.lines.skipped(rel, reason)


class FileGuard:
    """Per-file failure isolation for every stage of a run (see the module docstring)."""

    def __init__(self, store: IndexStore, state: RunState) -> None:
        self.store = store
        self.state = state

    @contextmanager
    def file(self, rel: str) -> Iterator[None]:
        """Run the block for file ``rel``: a failure of the file's own skips it; the run goes on."""
        try:
            yield
        except (KeyboardInterrupt, SystemExit, RunFailed):
            raise
        except BaseException as exc:  # R3.7: one bad file (even MemoryError) never aborts a run
            if self.store.is_failure(exc):
                raise
            self.state.skip(rel, failure_reason(exc))
