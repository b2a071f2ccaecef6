"""``KBService``: one knowledge base served to many concurrent callers (MCP tools, the watcher).

It owns the index connections, the model gate and the write lock (SPEC §4.11, R7.5, R9.6). The
design deliberately goes beyond upstream's one global mutex, under which eight clients got ~9
searches/s at a p50 of ~600 ms and a rebuild made search unavailable until it finished:

- **Searches run in parallel.** Each takes a read connection from a small pool (one connection per
  concurrent caller: one apsw connection serialises its statements) and reads a WAL snapshot, so it
  never waits for a writer and never sees a half-written file.
- **Writes are serialised** by one write lock: ``rebuild`` (single-flight, R7.23) and watcher
  batches. The indexer commits each file in its own transaction, so readers see progress file by
  file while a long rebuild runs.
- **One shared model, gated.** Query-time model calls (query embedding, rerank) pass one FIFO gate
  with as many permits as cores: onnxruntime already spreads one call over its intra-op threads, so
  more concurrent calls than cores only oversubscribe the CPU, and FIFO keeps the p95 bounded.
  Document batches are embedded only by the single writer and do not take a permit, so a search
  never queues behind a multi-second bulk batch; at most permits + 1 model calls run at once.

Lock order (R4.41 "embedder, then database"): a search embeds its query *before* it takes a read
connection, and the indexer embeds outside transactions (R4.4), so no thread waits for the model
while it holds a database resource. The write lock is outermost and only writers take it; the pool
never makes a caller wait, so a read connection held during a rerank is not a lock anyone queues
behind. Every section is a ``with`` block: an exception rolls back the open transaction (apsw) and
releases the lock, so a failed request never wedges the service.

The parts live in ``grooveseek/serving/``, one concern each: the gate (``gate.py``), the background
model load (``loader.py``), the gated model wrappers (``shared.py``), the read-connection pool
(``readpool.py``), the watcher's writer lease (``lease.py``) and the service's errors (``errors.py``).
This module composes them and owns the write lock, single-flight rebuilds and the watcher.

Issue 23: when several servers share one index (PostgreSQL), the store's ``Coordination``
(``store/coordination.py``) extends the write lock and the single flight across them, runs the
watcher on one server only, and carries change notices to all (``changes``). On the SQLite file it
is local and changes nothing.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from .app import App
from .index.batch import BatchIndexer
from .index.forced import run_forced
from .index.guard import open_for_index
from .index.indexer import Indexer, IndexOptions, walk_policy
from .index.report import Reporter
from .search.pipeline import run_search
from .search.query import compile_query
from .search.queryvectors import CachedQueries, ModelQueries, QueryVectors
from .search.request import SearchRequest
from .serving.errors import RebuildRunning, ServiceClosed
from .serving.gate import FairGate, cpu_count
from .serving.lease import WatcherLease
from .serving.loader import ModelLoader
from .serving.readpool import MAX_IDLE_READERS, READER_MMAP_BYTES, ReadPool
from .serving.shared import GatedReranker, SharedEmbedder
from .store.coordination import ChangeFeed, coordination_for, rebuild_claim
from .store.interface import IndexStore
from .types import IndexSummary, SearchResponse
from .walker import WalkPolicy

if TYPE_CHECKING:
    from .index.batch import BatchOutcome, PathChanges
    from .index.watcher import Watcher


class KBService:
    """Serve one KB: parallel searches, serialised writes, an optional file watcher."""

    def __init__(
        self,
        app: App,
        *,
        log: Callable[[str], None] | None = None,
        model_permits: int | None = None,
        max_idle_readers: int | None = None,
    ) -> None:
        self.app = app
        self._log = log or (lambda message: None)
        cores = cpu_count()
        self.gate = FairGate(model_permits or cores)
        self.embedder = SharedEmbedder(app.embedder, self.gate)
        self.queries = ModelQueries(self.embedder)  # gated query vectors, the model's own languages
        inner_reranker = app.reranker
        self.reranker = None if inner_reranker is None else GatedReranker(inner_reranker, self.gate)
        # Issue 23: the servers of a shared index agree on one writer and hear of each other's
        # writes; ``changes.version`` moves on every notice, so a value cached about the index's
        # state (keyed on the version it was read at) is stale once it moved. The feed covers every
        # writer only when ``coordination.shared`` and ``listening()``: on the SQLite file it hears
        # this process's writes alone (``groove index`` elsewhere replaces the file unannounced).
        self.coordination = coordination_for(app.db)
        self.changes = ChangeFeed()
        self.coordination.listen(self.changes.bump)
        self.pool = ReadPool(
            app.db,
            app.kb,
            self.embedder,
            max_idle=max_idle_readers or MAX_IDLE_READERS,
            choice=app.model_choice,
            changes=self.changes if self.coordination.shared else None,
            live=self.coordination.listening,
        )
        self._write_lock = threading.Lock()
        self._state_lock = threading.Lock()
        self._rebuild_started: float | None = None
        self._watcher: Watcher | None = None
        self._lease: WatcherLease | None = None
        self._closed = False

    # -- models --------------------------------------------------------------------------------
    def load_models_in_background(
        self, on_error: Callable[[BaseException], None], on_done: Callable[[], None] = lambda: None
    ) -> ModelLoader:
        """Start loading the embedder and the reranker; model calls wait for it (a query only for
        the model it reads), nothing else does.

        ``serve`` uses this so the MCP handshake and the listings answer while the model loads
        (clients give up on a slow ``initialize``); ``on_error`` reports a failed load once, and
        ``on_done`` runs when the load has finished either way.
        """
        loads = [self.embedder.inner.load]
        if self.reranker is not None:
            loads.append(self.reranker.inner.load)
        loader = ModelLoader(loads, on_error, on_done)
        self.embedder.loader = loader
        if self.reranker is not None:
            self.reranker.loader = loader
        loader.start()
        return loader

    # -- reads ---------------------------------------------------------------------------------
    @contextlib.contextmanager
    def reader(self) -> Iterator[IndexStore]:
        """A read connection for one call; never waits for a writer (WAL snapshot)."""
        store, identity = self.pool.acquire()
        reusable = False
        try:
            yield store
            reusable = True
        finally:
            self.pool.release(store, identity, reusable=reusable)

    def search(
        self,
        request: SearchRequest,
        finish: Callable[[IndexStore, SearchResponse], SearchResponse] | None = None,
    ) -> SearchResponse:
        """Run the pipeline; the query is embedded first, outside any database resource (R4.41).

        Every leg, the hydration and ``finish`` (the MCP tool's ``uri`` lookup) read one snapshot:
        a writer committing mid-search (a forced rebuild replaces every document row) can neither
        drop a hit between the legs and the metadata read nor leave a hit without its ``uri``.
        """
        self._check_open()
        self.pool.check()
        compiled = compile_query(request.query)  # a malformed query fails before any model call
        text = compiled.positive_text
        hint = self.queries  # bound to the mix the last search saw; checked under the snapshot
        known = {text: hint.vector(text)} if "vector" in request.legs and text.strip() else {}
        with self.reader() as store, store.read_snapshot():
            # Issue 26: the composite routes a query by the index's language mix, read under this
            # snapshot; a vector embedded under another routing (the first search of a server, or
            # a run that changed the mix in between) is embedded again, so every path ranks alike.
            bound = hint.over(store)
            self.queries = bound  # an immutable provider: no model object holds an index's state
            queries: QueryVectors = CachedQueries(
                bound, known if bound.route(text) == hint.route(text) else {}
            )
            response = run_search(store, queries, request, reranker=self.reranker)
            return finish(store, response) if finish is not None else response

    # -- writes --------------------------------------------------------------------------------
    @contextlib.contextmanager
    def writer(self) -> Iterator[IndexStore]:
        """The write connection under the write lock; closed (any transaction rolled back) on exit."""
        self._check_open()
        with self._write_lock, self.coordination.write_section():
            store = open_for_index(self.app.db, force=False)
            try:
                yield store
            finally:
                store.close()

    def rebuild(self, *, force: bool = False) -> IndexSummary:
        """Run the indexer; single-flight (R7.23). Searches keep working while it runs."""
        with self._state_lock:
            self._check_open()
            if self._rebuild_started is not None:
                raise RebuildRunning(time.monotonic() - self._rebuild_started)
            self._rebuild_started = time.monotonic()

        def index_into(store: IndexStore) -> IndexSummary:
            reporter = Reporter(quiet=True, sink=self._log)
            indexer = Indexer(
                self.app.kb,
                store,
                self.app.config,
                self.app.registry,
                self.embedder,
                reporter,
                self.app.model_choice,
            )
            return indexer.run(IndexOptions(force=force))

        try:
            with rebuild_claim(self.coordination) as busy:  # single flight across servers too
                if busy is not None:
                    raise RebuildRunning(busy.started_seconds_ago)
                try:
                    if force:  # built aside and installed in one step: searches never see a half-built index
                        with self._write_lock, self.coordination.write_section():
                            self._check_open()
                            return run_forced(self.app.db, index_into)
                    with self.writer() as store:
                        return index_into(store)
                finally:
                    self.coordination.notify_changed()
        finally:
            with self._state_lock:
                self._rebuild_started = None

    def apply_changes(self, changes: PathChanges, policy: WalkPolicy) -> BatchOutcome:
        """One watcher batch, under the same write lock as ``rebuild`` (R9.6)."""
        try:
            with self.writer() as store:
                reporter = Reporter(sink=self._log)
                batch = BatchIndexer(
                    self.app.kb, store, self.app.config, self.app.registry, self.embedder, reporter
                )
                return batch.apply(changes, policy)
        finally:
            self.coordination.notify_changed()

    # -- the watcher ---------------------------------------------------------------------------
    def watch_as_writer(self, **tuning: Any) -> WatcherLease:
        """Run the watcher while this server holds the writer lease (issue 23, ``serving/lease.py``):
        at once on a file index; on a shared one, on exactly one server at a time. Idempotent."""

        def start(rescan: bool) -> None:
            self.start_watcher(rescan_first=rescan, **tuning)

        with self._state_lock:
            self._check_open()
            lease, fresh = self._lease, self._lease is None
            if lease is None:
                lease = self._lease = WatcherLease(self.coordination, start, self.stop_watcher, log=self._log)
        if fresh:
            lease.begin()
        return lease

    @property
    def lease(self) -> WatcherLease | None:
        return self._lease

    def start_watcher(
        self, *, debounce_ms: int | None = None, poll: bool | None = None, **tuning: Any
    ) -> Watcher:
        """Start watching the KB (R9.1); ``debounce_ms``/``poll`` override ``[watch]``. Idempotent."""
        from .index.watcher import Watcher  # watchfiles loads only when watching is on

        with self._state_lock:
            self._check_open()
            if self._watcher is None:
                cfg = self.app.config.watch
                self._watcher = Watcher(
                    self.app.kb,
                    self.apply_changes,
                    walk_policy(self.app.config, self.app.registry, None),
                    debounce_ms=cfg.debounce_ms if debounce_ms is None else debounce_ms,
                    poll=cfg.poll if poll is None else poll,
                    log=self._log,
                    **tuning,
                )
                self._watcher.start()
            return self._watcher

    def stop_watcher(self) -> None:
        with self._state_lock:
            watcher, self._watcher = self._watcher, None
        if watcher is not None:
            watcher.stop()

    @property
    def watcher(self) -> Watcher | None:
        return self._watcher

    # -- lifecycle -----------------------------------------------------------------------------
    def _check_open(self) -> None:
        if self._closed:
            raise ServiceClosed()

    def close(self) -> None:
        """Stop the watcher and close idle connections; calls in flight finish, new ones are refused."""
        with self._state_lock:
            lease, self._lease = self._lease, None
        if lease is not None:
            lease.close()  # releases the writer lease: another server takes over
        self.stop_watcher()
        self._closed = True
        self.pool.close()
        self.coordination.close()


__all__ = [
    "MAX_IDLE_READERS",
    "READER_MMAP_BYTES",
    "FairGate",
    "GatedReranker",
    "KBService",
    "ModelLoader",
    "ReadPool",
    "RebuildRunning",
    "ServiceClosed",
    "SharedEmbedder",
    "cpu_count",
]
