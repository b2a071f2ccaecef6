"""The watcher runs on the one server that holds the writer lease (issue 23; ``store/coordination.py``).

On a file index the lease is always this process's, so the watcher starts at once, as before. On an
index several servers share, the first server to take the lease runs the watcher; every other one
stands by and tries again once a second (a try never waits, and it is not a search-visible poll).
The holder checks on the same tick that its lease still holds: a lease whose session died (the
database restarted, the network dropped) stops the watcher, because another server may already
have taken over. A server that takes over starts its watcher with a rescan of the whole knowledge
base, so a note written while no watcher ran (between the holder's death and the takeover) is
indexed too.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from ..store.coordination import Coordination

__all__ = ["ANOTHER_SERVER", "RETRY_SECONDS", "THIS_SERVER", "WatcherLease"]

RETRY_SECONDS = 1.0
THIS_SERVER = "this server"
ANOTHER_SERVER = "another server"


class WatcherLease:
    """Starts and stops the watcher as the writer lease comes and goes (module docstring).

    ``start(rescan)`` starts the watcher (``rescan``: check the whole knowledge base first);
    ``stop()`` stops it. ``role`` is what ``groove serve`` and its logs show: "this server" or
    "another server".
    """

    def __init__(
        self,
        coordination: Coordination,
        start: Callable[[bool], None],
        stop: Callable[[], None],
        *,
        log: Callable[[str], None],
        retry_seconds: float = RETRY_SECONDS,
    ) -> None:
        self._coordination = coordination
        self._start = start
        self._stop_watcher = stop
        self._log = log
        self._retry = retry_seconds
        self._stop = threading.Event()
        self._cond = threading.Condition()
        self._holding = False
        self._thread: threading.Thread | None = None
        self._failing = False  # a failed try is logged once until a try works again
        self.takeovers = 0

    @property
    def holding(self) -> bool:
        with self._cond:
            return self._holding

    @property
    def role(self) -> str:
        return THIS_SERVER if self.holding else ANOTHER_SERVER

    def wait_holding(self, holding: bool, timeout: float) -> bool:
        """Block until this server holds (or no longer holds) the lease; for tests and tools."""
        with self._cond:
            return self._cond.wait_for(lambda: self._holding == holding, timeout)

    def begin(self) -> bool:
        """Try once now (a file index: always this server); keep trying in the background when the
        index is shared. Returns whether this server runs the watcher now."""
        got = self._try(first=True)
        if self._coordination.shared:
            self._thread = threading.Thread(target=self._run, name="groove-writer-lease", daemon=True)
            self._thread.start()
            if not got:
                self._log(
                    f"watcher: {ANOTHER_SERVER} ({self._holder()}) runs the watcher and writes; this server "
                    "answers searches and takes over if that one stops"
                )
        return got

    def _holder(self) -> str:
        try:
            return self._coordination.writer_holder() or "unknown"
        except Exception:  # noqa: BLE001 - only a name for a log line
            return "unknown"

    def _try(self, *, first: bool) -> bool:
        try:
            got = self._coordination.try_acquire_writer()
        except Exception as exc:  # noqa: BLE001 - the database may be down for a while: retried
            if not self._failing:
                self._log(f"watcher: cannot reach the writer lease ({exc}); retrying every {self._retry:g} s")
            self._failing = True
            return False
        self._failing = False
        if not got:
            return False
        if not first:
            self.takeovers += 1
        try:
            self._start(not first)  # taking over: first catch up with what changed meanwhile
        except BaseException:
            self._coordination.release_writer()
            raise
        with self._cond:
            self._holding = True
            self._cond.notify_all()
        if self._coordination.shared:
            self._log(f"watcher: {THIS_SERVER} runs the watcher and writes (writer lease taken)")
        return True

    def _run(self) -> None:
        while not self._stop.wait(self._retry):
            if self.holding:
                if not self._alive():
                    self._lost()
            else:
                try:
                    self._try(first=False)
                except Exception as exc:  # noqa: BLE001 - a watcher that cannot start: logged, retried
                    self._log(f"watcher: could not start after taking the writer lease: {exc}")

    def _alive(self) -> bool:
        try:
            return self._coordination.writer_alive()
        except Exception:  # noqa: BLE001 - cannot tell: treated as lost, the safe side
            return False

    def _lost(self) -> None:
        self._stop_watcher()
        with self._cond:
            self._holding = False
            self._cond.notify_all()
        self._coordination.release_writer()
        self._log(
            "watcher: the writer lease was lost (its database session ended); the watcher stopped and "
            "this server takes the lease again when it is free"
        )

    def close(self) -> None:
        """Stop trying; a held lease is released (another server takes over within a second)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10.0)
        self._stop_watcher()
        with self._cond:
            held, self._holding = self._holding, False
            self._cond.notify_all()
        if held:
            self._coordination.release_writer()
