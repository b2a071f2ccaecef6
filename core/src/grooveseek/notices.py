"""Status lines for stderr that honour the command's verbosity: ``notice`` and ``quiet_notices``.

A status line is news a person may want at normal verbosity and never under ``--quiet``: the
model-loading line of SPEC R5.9 ("Loading embedding model: ..."), printed by the embedder plugins
when they load a model. Plugins print it with ``grooveseek.notice(text)`` instead of writing to
``sys.stderr`` themselves, so that ``groove index --quiet`` (which prints nothing but warnings and
errors, issue 26) can hold it back: the command runs inside ``quiet_notices()``. Warnings and errors
never go through here; they are printed whatever the verbosity.

The quiet state is process-wide, not per thread, because a model may load in any thread of the
command (a pipeline stage, a server's request thread), and it nests: it ends when the outermost
``quiet_notices()`` block does. ``sys.stderr`` is looked up at each call, so a live progress
display that redirects it (rich) prints the line above the display, and a worker process that
points it at ``os.devnull`` prints nothing.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["notice", "notices_quiet", "quiet_notices"]

_lock = threading.Lock()
_depth = 0  # open quiet_notices() blocks in this process


def notices_quiet() -> bool:
    """Whether status lines are held back now (inside a ``quiet_notices()`` block)."""
    return _depth > 0


def notice(message: str) -> None:
    """Print one status line to stderr, unless the command runs quiet (``quiet_notices``)."""
    if _depth > 0:
        return
    print(message, file=sys.stderr, flush=True)


@contextmanager
def quiet_notices(active: bool = True) -> Iterator[None]:
    """Hold back every ``notice`` while the block runs (``active``; False makes it a no-op, so a
    command can write ``with quiet_notices(quiet):``)."""
    global _depth
    if not active:
        yield
        return
    with _lock:
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
