"""Pooled read connections for a served KB: reused most-recent-first, never blocking a caller.

mmap lets a search read pages straight from the OS page cache instead of copying them into
SQLite's own cache; the vector leg scans every vector, so this is most of its I/O (bench figures
in bench/README.md).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from ..errors import IndexMissing
from ..index.guard import ModelChoice, check_model, open_for_search
from ..interfaces import Embedder
from ..store.coordination import ChangeFeed
from ..store.interface import IndexStore
from ..store.store import index_identity
from .errors import ServiceClosed

__all__ = ["MAX_IDLE_READERS", "READER_MMAP_BYTES", "ReadPool"]

# 256 MiB of address space per reader, not memory: pages are shared.
READER_MMAP_BYTES = 256 * 1024 * 1024
# Idle read connections kept for reuse. Above this, a burst opens extra connections and closes them
# after use; an idle one costs a file handle and a small page cache (reads go through mmap).
MAX_IDLE_READERS = 16


def _file_identity(db: Path, kb: Path) -> tuple[int, int]:
    identity = index_identity(db)  # a file's (device, inode), or a database backend's generation
    if identity is None:
        raise IndexMissing(db, kb)
    return identity


class ReadPool:
    """Idle read connections, reused most-recent-first so their caches stay warm.

    Never blocks: a caller that finds none idle opens one, and at most ``max_idle`` are kept. Each
    checkout runs the model guard (three tiny queries) and compares the file's identity with the
    one the connection was opened on, so a file replaced under a running server (``groove index
    --force`` from another process) is never read through a stale handle.

    With ``changes`` (an index several servers share, issue 23) the identity is read once per change
    notice instead of once per checkout, while ``live()`` says notices are arriving: every commit
    that replaces the index notifies, so between notices it cannot have changed.
    """

    def __init__(
        self,
        db: Path,
        kb: Path,
        embedder: Embedder,
        *,
        max_idle: int,
        choice: ModelChoice | None = None,
        changes: ChangeFeed | None = None,
        live: Callable[[], bool] = lambda: False,
    ) -> None:
        self.db = db
        self.kb = kb
        self.embedder = embedder
        self.choice = choice
        self.max_idle = max_idle
        self._lock = threading.Lock()
        self._idle: list[tuple[IndexStore, tuple[int, int]]] = []
        self._closed = False
        self.opened = 0  # connections opened so far (for tests and the bench)
        self._changes = changes
        self._live = live
        self._known: tuple[int, tuple[int, int]] | None = None  # (notice version, identity)

    def identity(self) -> tuple[int, int]:
        """The index's identity now (IndexMissing when there is none); see the class docstring."""
        if self._changes is None or not self._live():
            return _file_identity(self.db, self.kb)
        version = self._changes.version  # read first: a notice during the read makes the next call read
        with self._lock:
            known = self._known
        if known is not None and known[0] == version:
            return known[1]
        identity = _file_identity(self.db, self.kb)
        with self._lock:
            self._known = (version, identity)
        return identity

    def check(self) -> None:
        """Fail fast, before a model call, when there is no index to read."""
        self.identity()

    def acquire(self) -> tuple[IndexStore, tuple[int, int]]:
        identity = self.identity()
        store = None
        with self._lock:
            if self._closed:
                raise ServiceClosed()
            while self._idle and store is None:
                candidate, seen = self._idle.pop()
                if seen == identity:
                    store = candidate
                else:
                    candidate.close()  # opened on a file that has since been replaced
        if store is None:
            return self._open(), identity
        try:
            check_model(store, self.embedder, self.kb, self.choice)
        except BaseException:
            store.close()
            raise
        return store, identity

    def _open(self) -> IndexStore:
        store = open_for_search(self.db, self.kb, self.embedder, self.choice)
        store.make_reader(READER_MMAP_BYTES)
        with self._lock:
            self.opened += 1
        return store

    def release(self, store: IndexStore, identity: tuple[int, int], *, reusable: bool) -> None:
        # A connection still holding a read snapshot (a caller kept an unfinished cursor) is not
        # handed on: the next caller would read stale data, and checkpoints would stall behind it.
        # txn_state sees such a statement; in_transaction does not (autocommit mode).
        keep = reusable and not store.holds_snapshot()
        with self._lock:
            if keep and not self._closed and len(self._idle) < self.max_idle:
                self._idle.append((store, identity))
                return
        store.close()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for store, _ in idle:
            store.close()
