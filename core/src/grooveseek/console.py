"""stderr output through rich: warnings, progress and logs, and the once-per-process warning gate.
Results never go through here (R0.15).

Wording written by GrooveSeek itself stays ASCII (R0.16); user data is printed as it is. Markup is
off so a path containing ``[x]`` prints verbatim.
"""

from __future__ import annotations

import logging
import os
import sys
import threading

from rich.console import Console

_console: Console | None = None


class OncePerProcess:
    """True the first time ``first()`` is asked, from any thread; False ever after (the SPEC's
    "one warning per process" of R6.39 and the MMR lambda = 1.0 footgun: searches run on several
    threads under MCP)."""

    def __init__(self) -> None:
        self._done = False
        self._lock = threading.Lock()

    def first(self) -> bool:
        with self._lock:
            if self._done:
                return False
            self._done = True
            return True


def err_console() -> Console:
    """The process-wide stderr console (created lazily so tests can swap sys.stderr)."""
    global _console
    if _console is None or _console.file is not sys.stderr:
        _console = Console(file=sys.stderr, markup=False, highlight=False, soft_wrap=True)
    return _console


def echo_err(message: str) -> None:
    err_console().print(message, markup=False, highlight=False)


class ConsoleHandler(logging.Handler):
    """Log records as one unwrapped ``<logger>: <message>`` line each on the rich stderr console.

    One line per record, never wrapped at the terminal width, so the R1.9 config line and the
    watcher's lines stay greppable when stderr is a file or a pipe.
    """

    def emit(self, record: logging.LogRecord) -> None:
        try:
            err_console().print(self.format(record), markup=False, highlight=False, soft_wrap=True)
        except Exception:  # noqa: BLE001 - logging must never raise into the caller
            self.handleError(record)


def verbose(level: int) -> None:
    """``-v``: which config was loaded and other detail of ours (DEBUG on ``grooveseek.config``);
    ``-vv``: every logger at DEBUG. Applied after ``setup_logging``, so it wins over GROOVE_LOG."""
    if level >= 2:
        logging.getLogger().setLevel(logging.DEBUG)
    if level >= 1:
        logging.getLogger("grooveseek.config").setLevel(logging.DEBUG)


def setup_logging() -> None:
    """R0.13: GROOVE_LOG=debug|info|warning|error, or grooveseek=debug for our loggers only."""
    spec = os.environ.get("GROOVE_LOG", "info").strip().lower() or "info"
    target, _, level_name = spec.rpartition("=")
    level = getattr(logging, level_name.upper(), logging.INFO)
    handler = ConsoleHandler()
    handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    root = logging.getLogger()
    for old in list(root.handlers):
        if isinstance(old, ConsoleHandler):
            root.removeHandler(old)
    root.addHandler(handler)
    logging.getLogger("grooveseek.config").setLevel(logging.NOTSET)  # drop an earlier run's -v
    if target:
        root.setLevel(logging.INFO)
        logging.getLogger(target).setLevel(level)
    else:
        root.setLevel(level)
