"""The PDF extraction worker: pypdf runs in a child process that can be killed (SPEC R3.36).

A thread cannot be stopped, so a hostile PDF that keeps pypdf busy would hold the indexer forever.
Instead one long-lived worker process (started on first use, reused across files) does the
extraction; the parent waits at most ``TIMEOUT_SECONDS`` for each answer and kills the worker
when it is late, then starts a fresh one for the next file. The worker's address space is capped
(``RLIMIT_AS`` where the platform has it), so a file that makes pypdf allocate without bound ends
in a ``MemoryError`` or a dead worker, never in an out-of-memory kill of the indexer.

The worker has no terminal of its own to speak on (issue 21): pypdf's log lines ("incorrect
startxref pointer") and Python warnings raised while a file is extracted are collected per
request, at most ``MAX_LOG_LINES``, and sent back with the answer, so the indexer prints them as
``<file>: pypdf: <line>`` warnings through its own logging. The worker ignores Ctrl-C (the
indexer stops it) and ends quietly on any failure of its own loop, so multiprocessing never
prints a child's traceback beside the run's output.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import multiprocessing
import signal
import sys
import threading
import warnings
from collections.abc import Callable, Iterator
from typing import Any

from grooveseek import ParseError

from .extract import extract

#: R3.36: extraction stops after 120 s. Tests lower it (the parent reads it on every call).
TIMEOUT_SECONDS = 120.0
#: R3.36: one page's text is cut at 1 MiB. Tests lower it (it travels with each request).
PAGE_TEXT_CAP = 1_048_576
#: The worker's address-space cap: room for pypdf plus several copies of the budget.
BASE_MEMORY = 2 << 30
BUDGET_COPIES = 8
#: Log lines and warnings kept per file; a hostile PDF can make pypdf log once per object.
MAX_LOG_LINES = 20


class _Collected(logging.Handler):
    """The worker's one log handler: each record as one line, the first ``MAX_LOG_LINES`` kept."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []
        self.dropped = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.add(f"{record.name}: {record.getMessage()}")

    def add(self, line: str) -> None:
        if len(self.lines) < MAX_LOG_LINES:
            self.lines.append(" ".join(line.split())[:500])
        else:
            self.dropped += 1

    def take(self) -> list[str]:
        lines, dropped = self.lines, self.dropped
        self.lines, self.dropped = [], 0
        if dropped:
            lines.append(f"... and {dropped} more log lines")
        return lines


_COLLECTED = _Collected()


@contextlib.contextmanager
def _collecting() -> Iterator[None]:
    """Python warnings raised during one extraction become collected lines as well."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield
        finally:
            for w in caught:
                _COLLECTED.add(f"{w.category.__name__}: {w.message}")


def _quiet_child() -> None:
    """Route every log line of the worker into ``_COLLECTED``; nothing reaches its stderr raw."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    root.addHandler(_COLLECTED)
    root.setLevel(logging.WARNING)
    logging.lastResort = None
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the indexer, which stops us


def _peak_rss_kib() -> int:
    try:
        import resource

        return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    except ImportError:  # Windows
        return 0


def _answer(request: tuple[Any, ...]) -> tuple[str, Any]:
    try:
        return "ok", extract(*request)
    except ParseError as exc:
        return "refused", str(exc)
    except MemoryError:
        return "error", "MemoryError: the PDF needs more memory than its extraction is allowed"
    except RecursionError:
        return "error", "RecursionError: the PDF's objects nest too deeply to read"
    except Exception as exc:  # noqa: BLE001 - any pypdf failure is this file's failure, reported back
        return "error", f"{type(exc).__name__}: {exc}"


def _serve(conn: Any, memory_limit: int | None) -> None:
    """The worker's entry point: any failure of the loop itself ends the worker without a word
    (the parent sees the pipe close and names the file); the exit status tells the parent enough."""
    try:
        _loop(conn, memory_limit)
    except BaseException:  # noqa: BLE001 - a child traceback would print raw on the run's stderr
        raise SystemExit(1) from None  # an int exit code: multiprocessing prints nothing


def _loop(conn: Any, memory_limit: int | None) -> None:
    """One request in, one ``(status, payload, peak RSS in KiB, log lines)`` out."""
    _quiet_child()
    if memory_limit is not None:
        try:
            import resource

            resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))
        except (ImportError, ValueError, OSError):
            pass  # no RLIMIT_AS (Windows, macOS): the timeout still bounds the work
    sys.setrecursionlimit(3000)
    import pypdf  # noqa: F401 - imported once, before the first request's clock starts

    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return
        with _collecting():
            status, payload = _answer(request)
        conn.send((status, payload, _peak_rss_kib(), _COLLECTED.take()))


def _context() -> Any:
    # forkserver: forking the (possibly threaded) indexer is unsafe; spawn where there is no fork.
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


class ExtractionWorker:
    """One child process serving extraction requests one at a time; restarted after a kill."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: Any = None
        self._conn: Any = None
        self._memory: int | None = None
        #: The largest peak RSS (KiB) any worker reported: the bench prints it.
        self.peak_rss_kib = 0

    def _start(self, memory_limit: int | None) -> None:
        ctx = _context()
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=_serve, args=(child, memory_limit), daemon=True, name="groove-pdf-extract")
        proc.start()
        child.close()
        self._proc, self._conn, self._memory = proc, parent, memory_limit

    def _needs_more(self, memory: int | None) -> bool:
        # A worker capped lower than this request allows is restarted; a larger cap serves it as is,
        # so index and get_document calls with different budgets do not restart it every time.
        if self._memory is None:
            return False
        return memory is None or memory > self._memory

    def stop(self) -> None:
        """Kill the worker (if any) and reap it."""
        proc, conn = self._proc, self._conn
        self._proc = self._conn = None
        if conn is not None:
            conn.close()
        if proc is not None:
            proc.kill()
            proc.join()

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def run(
        self, data: bytes, budget_limit: int, budget_name: str, warn: Callable[[str], None] | None = None
    ) -> dict[str, Any]:
        """Extract ``data`` in the worker; raises ParseError on timeout, refusal or failure. The
        log lines and warnings of the extraction go to ``warn`` first, whatever the outcome."""
        memory = None if budget_limit >= 1 << 40 else BASE_MEMORY + BUDGET_COPIES * budget_limit
        with self._lock:
            if self._proc is None or not self._proc.is_alive() or self._needs_more(memory):
                self.stop()
                self._start(memory)
            try:
                self._conn.send((data, budget_limit, budget_name, PAGE_TEXT_CAP))
                ready = self._conn.poll(TIMEOUT_SECONDS)
                answer = self._conn.recv() if ready else None
            except (EOFError, OSError, BrokenPipeError):
                self.stop()
                raise ParseError(
                    "parse failed: the PDF extraction worker ended abruptly (out of memory or crashed)"
                ) from None
            if answer is None:
                self.stop()  # really stops the work: the process is killed, not abandoned
                raise ParseError(f"PDF text extraction exceeded {TIMEOUT_SECONDS:g} s")
        status, payload, rss, lines = answer
        self.peak_rss_kib = max(self.peak_rss_kib, rss)
        if warn is not None:
            for line in lines:
                warn(line)
        if status == "ok":
            return payload
        if status == "refused":
            raise ParseError(payload)
        raise ParseError(f"parse failed: {payload}")


WORKER = ExtractionWorker()
atexit.register(WORKER.stop)
