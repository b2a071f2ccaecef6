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
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .app import App
from .errors import GrooveError, IndexMissing
from .index.forced import run_forced
from .index.guard import ModelChoice, check_model, open_for_index, open_for_search
from .index.indexer import Indexer, IndexOptions, walk_policy
from .index.report import Reporter
from .interfaces import Embedder, Reranker
from .search.pipeline import run_search
from .search.query import compile_query
from .search.request import SearchRequest
from .store.interface import IndexStore
from .store.store import index_identity
from .types import IndexSummary, SearchResponse
from .walker import WalkPolicy

if TYPE_CHECKING:
    from .index.watcher import BatchOutcome, PathChanges, Watcher

# mmap lets a search read pages straight from the OS page cache instead of copying them into
# SQLite's own cache; the vector leg scans every vector, so this is most of its I/O (bench figures
# in bench/README.md). 256 MiB of address space per reader, not memory: pages are shared.
READER_MMAP_BYTES = 256 * 1024 * 1024
# Idle read connections kept for reuse. Above this, a burst opens extra connections and closes them
# after use; an idle one costs a file handle and a small page cache (reads go through mmap).
MAX_IDLE_READERS = 16


def cpu_count() -> int:
    """Cores this process may use (the affinity mask where the platform has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS, Windows
        return max(1, os.cpu_count() or 1)


class RebuildRunning(GrooveError):
    """A second ``rebuild`` while one runs (R7.23): names how long ago the first one started."""

    def __init__(self, started_seconds_ago: float) -> None:
        self.started_seconds_ago = started_seconds_ago
        super().__init__(f"rebuild_index is already running, started {int(started_seconds_ago)} s ago")


class ServiceClosed(GrooveError):
    """A call arrived after ``close()``."""

    def __init__(self) -> None:
        super().__init__("the knowledge base service is shutting down; no new requests are accepted")


# --------------------------------------------------------------------------- the model gate


class FairGate:
    """A counting semaphore that admits callers in arrival order.

    ``threading.Semaphore`` lets a thread that just released re-acquire ahead of older waiters;
    under load that starves some searches (the p95 explodes while the p50 looks fine).
    """

    def __init__(self, permits: int) -> None:
        if permits < 1:
            raise ValueError("a gate needs at least one permit")
        self.permits = permits
        lock = threading.Lock()
        self._cond = threading.Condition(lock)  # entrants wait here
        self._observers = threading.Condition(lock)  # wait_queued waits here, so entrants never wake it
        self._free = permits
        self._next_ticket = 0
        self._serving = 0

    @property
    def queued(self) -> int:
        """Callers waiting for a permit."""
        with self._cond:
            return self._next_ticket - self._serving

    def wait_queued(self, count: int, timeout: float) -> bool:
        """Block until at least ``count`` callers wait (for tests and diagnostics)."""
        with self._observers:
            return self._observers.wait_for(lambda: self._next_ticket - self._serving >= count, timeout)

    def __enter__(self) -> None:
        with self._cond:
            ticket = self._next_ticket
            self._next_ticket += 1
            self._observers.notify_all()
            self._cond.wait_for(lambda: ticket == self._serving and self._free > 0)
            self._serving += 1
            self._free -= 1
            self._cond.notify_all()  # the next ticket may enter too if a permit is left

    def __exit__(self, *exc: object) -> None:
        with self._cond:
            self._free += 1
            self._cond.notify_all()


class ModelLoader:
    """Loads the models of a server once, in a background thread, so the MCP handshake and the
    listings never wait for them; every model call waits here until the load has finished.

    A failed load is kept and raised to every caller that needs the model (each search then
    answers with the plugin's own message), while calls that need no model keep working.
    """

    def __init__(
        self, loads: Sequence[Callable[[], None]], on_error: Callable[[BaseException], None]
    ) -> None:
        self._loads = tuple(loads)
        self._on_error = on_error
        self._done = threading.Event()
        self._error: BaseException | None = None
        # Not a daemon: a process that exits early (a bind failure, a signal) waits for the load to
        # finish, because tearing the interpreter down under onnxruntime's session construction
        # aborts the process ("terminate called without an active exception", SIGABRT).
        self._thread = threading.Thread(target=self._run, name="groove-model-load", daemon=False)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        try:
            for load in self._loads:
                load()
        except BaseException as exc:  # noqa: BLE001 - kept and re-raised to each caller that waits
            self._error = exc
            self._on_error(exc)
        finally:
            self._done.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the load has finished; raise what it failed with. False on a timeout."""
        if not self._done.wait(timeout):
            return False
        if self._error is not None:
            raise self._error
        return True


class SharedEmbedder(Embedder):
    """The one process-wide embedder; query embedding passes the gate (R4.41's embedder lock).

    The wrapped embedder must tolerate concurrent calls (FastEmbed does: an onnxruntime session and
    a tokenizer are safe to share between threads). ``embed_documents`` is not gated: only the
    writer calls it, one batch at a time under the write lock, and holding a query permit for a
    batch of seconds would stall every search behind it.
    """

    def __init__(self, inner: Embedder, gate: FairGate) -> None:
        self.inner = inner
        self.gate = gate
        self.id = inner.id
        self.identity = inner.identity
        self.dimension = inner.dimension
        self.batch_size = inner.batch_size
        self.api_version = inner.api_version
        # Class attributes of Embedder with defaults: without copying them the wrapper would report
        # the defaults, not the model's window and languages (chunk budgets and fusion read them).
        self.max_input_tokens = inner.max_input_tokens
        self.languages = inner.languages
        self.loader: ModelLoader | None = None  # set while a background load runs (``serve``)

    def __getattr__(self, name: str) -> Any:  # plugin-specific extras (spec, cache_dir, ...)
        if name in ("inner", "loader"):
            raise AttributeError(name)
        return getattr(self.inner, name)

    def _loaded(self) -> None:
        if self.loader is not None:
            self.loader.wait()

    def load(self) -> None:
        if self.loader is not None:
            self.loader.wait()
        else:
            self.inner.load()  # FastEmbed serialises loading itself; a load is not a model call

    def probe_before_reset(self) -> None:
        self.inner.probe_before_reset()

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        self._loaded()
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        self._loaded()  # before the gate: a search waiting for the load holds no permit
        with self.gate:
            return self.inner.embed_query(text)


class _Precomputed(Embedder):
    """Hands the pipeline a query vector computed before the read connection was taken."""

    def __init__(self, shared: SharedEmbedder, text: str, vector: np.ndarray) -> None:
        self.shared = shared
        self.id, self.identity, self.dimension = shared.id, shared.identity, shared.dimension
        self._text = text
        self._vector = vector

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self.shared.embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        # Any other text (should the pipeline ever embed something else) still gets a real vector.
        return self._vector if text == self._text else self.shared.embed_query(text)


class _GatedReranker(Reranker):
    """The reranker shares the gate: it runs on the same cores as the embedder."""

    def __init__(self, inner: Reranker, gate: FairGate) -> None:
        self.inner = inner
        self.gate = gate
        self.id = inner.id
        self.api_version = inner.api_version
        self.licence_note = inner.licence_note
        self.loader: ModelLoader | None = None

    def __getattr__(self, name: str) -> Any:
        if name in ("inner", "loader"):
            raise AttributeError(name)
        return getattr(self.inner, name)

    def load(self) -> None:
        if self.loader is not None:
            self.loader.wait()
        else:
            self.inner.load()

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        if self.loader is not None:
            self.loader.wait()
        with self.gate:
            return self.inner.score(query, texts)


# --------------------------------------------------------------------------- read connections


def _file_identity(db: Path, kb: Path) -> tuple[int, int]:
    identity = index_identity(db)
    if identity is None:
        raise IndexMissing(db, kb)
    return identity


class ReadPool:
    """Idle read connections, reused most-recent-first so their caches stay warm.

    Never blocks: a caller that finds none idle opens one, and at most ``max_idle`` are kept. Each
    checkout runs the model guard (three tiny queries) and compares the file's identity with the
    one the connection was opened on, so a file replaced under a running server (``groove index
    --force`` from another process) is never read through a stale handle.
    """

    def __init__(
        self, db: Path, kb: Path, embedder: Embedder, *, max_idle: int, choice: ModelChoice | None = None
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

    def check(self) -> None:
        """Fail fast, before a model call, when there is no index to read."""
        _file_identity(self.db, self.kb)

    def acquire(self) -> tuple[IndexStore, tuple[int, int]]:
        identity = _file_identity(self.db, self.kb)
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


# --------------------------------------------------------------------------- the service


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
        inner_reranker = app.reranker
        self.reranker = None if inner_reranker is None else _GatedReranker(inner_reranker, self.gate)
        self.pool = ReadPool(
            app.db,
            app.kb,
            self.embedder,
            max_idle=max_idle_readers or MAX_IDLE_READERS,
            choice=app.model_choice,
        )
        self._write_lock = threading.Lock()
        self._state_lock = threading.Lock()
        self._rebuild_started: float | None = None
        self._watcher: Watcher | None = None
        self._closed = False

    # -- models --------------------------------------------------------------------------------
    def load_models_in_background(self, on_error: Callable[[BaseException], None]) -> ModelLoader:
        """Start loading the embedder and the reranker; model calls wait for it, nothing else does.

        ``serve`` uses this so the MCP handshake and the listings answer while the model loads
        (clients give up on a slow ``initialize``); ``on_error`` reports a failed load once.
        """
        loads = [self.embedder.inner.load]
        if self.reranker is not None:
            loads.append(self.reranker.inner.load)
        loader = ModelLoader(loads, on_error)
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
        embedder: Embedder = self.embedder
        if "vector" in request.legs and text.strip():
            embedder = _Precomputed(self.embedder, text, self.embedder.embed_query(text))
        with self.reader() as store, store.read_snapshot():
            response = run_search(store, embedder, request, reranker=self.reranker)
            return finish(store, response) if finish is not None else response

    # -- writes --------------------------------------------------------------------------------
    @contextlib.contextmanager
    def writer(self) -> Iterator[IndexStore]:
        """The write connection under the write lock; closed (any transaction rolled back) on exit."""
        self._check_open()
        with self._write_lock:
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
            if force:  # built aside and installed in one step: searches never see a half-built index
                with self._write_lock:
                    self._check_open()
                    return run_forced(self.app.db, index_into)
            with self.writer() as store:
                return index_into(store)
        finally:
            with self._state_lock:
                self._rebuild_started = None

    def apply_changes(self, changes: PathChanges, policy: WalkPolicy) -> BatchOutcome:
        """One watcher batch, under the same write lock as ``rebuild`` (R9.6)."""
        from .index.watcher import BatchIndexer  # watchfiles loads only when watching is used

        with self.writer() as store:
            reporter = Reporter(sink=self._log)
            batch = BatchIndexer(
                self.app.kb, store, self.app.config, self.app.registry, self.embedder, reporter
            )
            return batch.apply(changes, policy)

    # -- the watcher ---------------------------------------------------------------------------
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
        self.stop_watcher()
        self._closed = True
        self.pool.close()


__all__ = [
    "FairGate",
    "KBService",
    "ModelLoader",
    "ReadPool",
    "RebuildRunning",
    "ServiceClosed",
    "SharedEmbedder",
    "cpu_count",
]
