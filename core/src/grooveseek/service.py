"""``KBService``: one knowledge base served to many concurrent callers (MCP tools, the watcher).

It owns the index connections and the locks of SPEC §4.11. Searches run on per-call read
connections; writes (``rebuild``, watcher batches) are serialised and single-flight. This first
version is deliberately simple; the concurrency work replaces the internals, not the interface.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator

from .app import App
from .errors import GrooveError
from .index.guard import open_for_index, open_for_search
from .index.indexer import Indexer, IndexOptions
from .index.report import Reporter
from .search.pipeline import run_search
from .search.request import SearchRequest
from .store.store import Store
from .types import IndexSummary, SearchResponse


class RebuildRunning(GrooveError):
    """A second ``rebuild`` while one runs (R7.20): names how long ago the first one started."""

    def __init__(self, started_seconds_ago: float) -> None:
        self.started_seconds_ago = started_seconds_ago
        super().__init__(f"rebuild_index is already running, started {int(started_seconds_ago)} s ago")


class KBService:
    """Serve one KB: searches, reads and serialised writes."""

    def __init__(self, app: App, *, log: Callable[[str], None] | None = None) -> None:
        self.app = app
        self._write_lock = threading.Lock()
        self._rebuild_guard = threading.Lock()
        self._rebuild_started: float | None = None
        self._log = log or (lambda message: None)

    @contextlib.contextmanager
    def reader(self) -> Iterator[Store]:
        """A read connection for one call (model guard already passed at start-up)."""
        store = open_for_search(self.app.db, self.app.kb, self.app.embedder)
        try:
            yield store
        finally:
            store.close()

    def search(self, request: SearchRequest) -> SearchResponse:
        with self.reader() as store:
            return run_search(store, self.app.embedder, request, reranker=self.app.reranker)

    def rebuild(self, *, force: bool = False) -> IndexSummary:
        """Run the indexer; single-flight (R7.20)."""
        with self._rebuild_guard:
            if self._rebuild_started is not None:
                raise RebuildRunning(time.monotonic() - self._rebuild_started)
            self._rebuild_started = time.monotonic()
        try:
            with self._write_lock:
                store = open_for_index(self.app.db, force=force)
                try:
                    reporter = Reporter(quiet=True, sink=self._log)
                    return Indexer(self.app.kb, store, self.app.config, self.app.registry, self.app.embedder,
                                   reporter).run(IndexOptions(force=force))  # fmt: skip
                finally:
                    store.close()
        finally:
            with self._rebuild_guard:
                self._rebuild_started = None

    def close(self) -> None:
        """Release connections and stop background work."""
