"""Coordination between the servers of one knowledge base (issue 23): who writes, and change notices.

Several ``groove serve`` processes may serve one index when it lives on a database server. They
must agree on three things, and the backend that holds the index is the one that can make them
agree, so ``Coordination`` is a backend capability (``StoreBackend.coordination``):

- **the writer lease**: exactly one server runs the watcher and writes what it reports. The lease
  belongs to a process, not a call: ``try_acquire_writer`` never waits, ``writer_alive`` tells the
  holder whether it still holds it (its session may have died), and the lease ends with the
  process, so another server takes over (``serving/lease.py`` retries once a second);
- **the write section**: every write of a server (a watcher batch, ``rebuild_index``) runs inside
  ``write_section``, so a rebuild on one server and a batch on another never interleave;
- **single-flight rebuilds** across servers (R7.23 extended): ``begin_rebuild`` returns a
  ``RebuildBusy`` naming how long ago the running one started, or claims the rebuild until
  ``end_rebuild``.

``notify_changed`` is said after a committed write that changes what a search sees; every server
that ``listen``\\ s hears it (its own included) and drops whatever it keeps about the index's state.

``LocalCoordination`` is the SQLite file's: one server owns its file, so the lease is always this
process's, the sections are the service's own lock, and notices stay in the process. Its methods
change nothing about how a file-backed server behaves.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Protocol

import attrs

__all__ = [
    "ChangeFeed",
    "Coordination",
    "LocalCoordination",
    "RebuildBusy",
    "coordination_for",
]


@attrs.frozen
class RebuildBusy:
    """A rebuild of the same index is running elsewhere, started this long ago."""

    started_seconds_ago: float


class Coordination(Protocol):
    """What the servers of one index agree on (see the module docstring). Thread-safe."""

    #: True when other processes may serve and write the same index (a database server); False
    #: for a file one server owns. A server logs its watcher role only when this is True.
    shared: bool

    def try_acquire_writer(self) -> bool:
        """Take the writer lease if nobody holds it; never waits. True when this process holds it."""
        ...

    def writer_alive(self) -> bool:
        """Whether the lease this process took is still held (False once its session died)."""
        ...

    def release_writer(self) -> None: ...

    def writer_holder(self) -> str | None:
        """Who holds the writer lease, as a person reads it (``host pid N``); None when nobody does."""
        ...

    def write_section(self) -> AbstractContextManager[None]:
        """Held around every write of this process; waits while another process writes."""
        ...

    def begin_rebuild(self) -> RebuildBusy | None:
        """Claim the one rebuild of this index, or say that one runs elsewhere (never waits)."""
        ...

    def end_rebuild(self) -> None: ...

    def notify_changed(self) -> None:
        """Tell every listening server that a committed write changed what a search sees."""
        ...

    def listen(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` (from any thread) on every notice, and whenever notices may have been
        missed (a listening session was lost and reopened). Notices come within a second or two."""
        ...

    def listening(self) -> bool:
        """Whether notices are being received now (a lost session is being reopened: False)."""
        ...

    def close(self) -> None: ...


class LocalCoordination:
    """The SQLite file's coordination: this process is the only server (module docstring)."""

    shared = False

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._listeners: list[Callable[[], None]] = []

    def try_acquire_writer(self) -> bool:
        return True

    def writer_alive(self) -> bool:
        return True

    def release_writer(self) -> None:
        return None

    def writer_holder(self) -> str | None:
        return None

    def write_section(self) -> AbstractContextManager[None]:
        return contextlib.nullcontext()

    def begin_rebuild(self) -> RebuildBusy | None:
        return None  # the service's own single-flight (R7.23) is all there is

    def end_rebuild(self) -> None:
        return None

    def notify_changed(self) -> None:
        with self._lock:
            listeners = list(self._listeners)
        for callback in listeners:
            callback()

    def listen(self, callback: Callable[[], None]) -> None:
        with self._lock:
            self._listeners.append(callback)

    def listening(self) -> bool:
        return True

    def close(self) -> None:
        with self._lock:
            self._listeners.clear()


class ChangeFeed:
    """A version number that moves on every change notice, for whatever a server keeps about the
    index's state: a value cached with the version it was read at is stale once ``version`` moved.
    ``wait_past`` lets tests and tools wait for the next notice with a deadline."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._version = 0
        self._callbacks: list[Callable[[int], None]] = []

    @property
    def version(self) -> int:
        with self._cond:
            return self._version

    def bump(self) -> None:
        with self._cond:
            self._version += 1
            version = self._version
            callbacks = list(self._callbacks)
            self._cond.notify_all()
        for callback in callbacks:
            callback(version)

    def subscribe(self, callback: Callable[[int], None]) -> None:
        """Call ``callback(version)`` after every notice (on the notifying thread: keep it short)."""
        with self._cond:
            self._callbacks.append(callback)

    def wait_past(self, version: int, timeout: float) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: self._version > version, timeout)


def coordination_for(db: Path) -> Coordination:
    """The coordination of the index at ``db``: its backend's, or the SQLite file's local one."""
    from .backend import bound

    binding = bound(db)
    if binding is None:
        return LocalCoordination()
    backend, target = binding
    return backend.coordination(target)


@contextlib.contextmanager
def rebuild_claim(coordination: Coordination) -> Iterator[RebuildBusy | None]:
    """``begin_rebuild`` .. ``end_rebuild`` as a block; yields the ``RebuildBusy`` when refused."""
    busy = coordination.begin_rebuild()
    try:
        yield busy
    finally:
        if busy is None:
            coordination.end_rebuild()
