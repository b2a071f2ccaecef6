"""Embedding in worker processes during an index run (issue 16: indexing on every core).

One ONNX session gains little from a second intra-op thread on a batch of one short text, and
nothing when another process holds the other core; a spawned process per core with a
single-threaded copy of the model does. ``EmbedWorkers`` owns those processes for one run: it
starts them once the run has asked for ``MIN_TEXTS`` texts (so a small run never pays for them),
keeps embedding in the indexing process until one has loaded its model, then splits each batch
into pieces the workers embed in any order and puts the vectors back in input order. Parsing and
writing stay in the indexing process, so the index is written exactly as before; only where the
vectors are computed changes, and a worker's vectors equal the indexing process's.

Only embedders whose ``parallel_factory()`` returns a factory are embedded this way; the others,
and any run with ``[index].embed_workers = 1``, embed in the indexing process as before. A worker
that dies (killed, out of memory) or cannot load its model never stops or hangs the run: the pool
is shut down, one warning says why, and the rest of the run embeds in the indexing process.
Queries never come here: they are embedded by the one session of the serving process.
"""

from __future__ import annotations

import contextlib
import math
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from ..errors import ModelError
from ..interfaces import Embedder, FloatArray

#: ``[index].embed_workers`` unset: one worker per usable core, at most this many (each holds its
#: own copy of the model: about 150 MB for minilm-l6-int8, more for bigger models).
AUTO_MAX_WORKERS = 4
#: A run starts its workers once it has asked for this many texts; smaller runs never do, since
#: starting a worker (an interpreter, numpy, the runtime, the model) costs a core about a second.
MIN_TEXTS = 128
#: Pieces per worker per batch: small enough that no core idles long at a batch's end.
PIECES_PER_WORKER = 4


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the platform tells it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # macOS, Windows: no affinity mask
        return max(1, os.cpu_count() or 1)


def worker_count(configured: int | None) -> int:
    """``[index].embed_workers`` as given, or one per usable core up to ``AUTO_MAX_WORKERS``."""
    return configured if configured is not None else min(usable_cores(), AUTO_MAX_WORKERS)


class WorkerSetupFailed(Exception):
    """Raised in a worker whose embedder could not be built or loaded; carries the reason."""


# -- the worker process ----------------------------------------------------------------------------
_EMBEDDER: Embedder | None = None
_SETUP_ERROR: str | None = None


def _setup(factory: Callable[[], Embedder]) -> None:
    """Each worker's initializer: build and load its embedder, quietly, once."""
    global _EMBEDDER, _SETUP_ERROR
    # Ctrl-C reaches the whole process group; the indexing process handles it and shuts the pool.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _exit_with_parent()
    # A worker of `groove serve` (rebuild_index over stdio) must never write to the MCP stream, and
    # the model's "Loading ..." line was already printed once by the indexing process.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)
    sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - lives as long as the worker
    saved, sys.stderr = sys.stderr, sys.stdout
    try:
        embedder = factory()
        embedder.load()
        _EMBEDDER = embedder
    except BaseException as exc:  # noqa: BLE001 - reported to the indexing process, which falls back
        _SETUP_ERROR = f"{type(exc).__name__}: {exc}"
    finally:
        sys.stderr = saved


def _exit_with_parent() -> None:
    """End this worker when the indexing process dies without shutting the pool (SIGKILL, OOM)."""
    import multiprocessing
    from multiprocessing.connection import wait

    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch() -> None:
        wait([parent.sentinel])
        os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _ready() -> int:
    if _SETUP_ERROR is not None:
        raise WorkerSetupFailed(_SETUP_ERROR)
    return os.getpid()


def _embed(texts: list[str]) -> FloatArray:
    if _EMBEDDER is None:
        raise WorkerSetupFailed(_SETUP_ERROR or "the worker has no embedder")
    return _EMBEDDER.embed_documents(texts)


# -- the indexing process --------------------------------------------------------------------------
class EmbedWorkers:
    """``embed_documents`` for one index run, spread over ``count`` worker processes when it pays.

    ``pieces`` counts the pieces the workers embedded (tests read it to know the path was taken).
    Call ``close()`` when the run ends, however it ends.
    """

    #: Wait for a worker to finish loading instead of embedding in this process meanwhile. Tests
    #: set it, so that a small run takes the worker path every time.
    wait_ready = False

    def __init__(self, embedder: Embedder, count: int, warn: Callable[[str], None]) -> None:
        self.embedder = embedder
        self.count = count
        self.warn = warn
        self.pieces = 0
        self.texts = 0  # texts this run asked for so far
        self._pool: ProcessPoolExecutor | None = None
        self._ready: list[Future[int]] = []
        self._usable = False  # a worker has loaded its model
        self._off = count <= 1  # one worker is the indexing process itself

    def embed_documents(self, texts: Sequence[str]) -> FloatArray:
        texts = list(texts)
        self.texts += len(texts)
        if self._pool is None and not self._off and self.texts >= MIN_TEXTS:
            self._start()
        if self._pool is not None:
            try:
                if self._is_ready():
                    return self._scatter(texts)
            except (BrokenProcessPool, WorkerSetupFailed) as exc:
                self._give_up(exc)
        return self.embedder.embed_documents(texts)  # also while the workers load

    def _is_ready(self) -> bool:
        """True once a worker has loaded its model (at once when ``wait_ready``); raises
        ``WorkerSetupFailed`` or ``BrokenProcessPool`` when the workers could not start."""
        if not self._usable:
            if not (self.wait_ready or any(f.done() for f in self._ready)):
                return False
            next((f for f in self._ready if f.done()), self._ready[0]).result()
            self._usable = True
        return True

    def _start(self) -> None:
        self._off = True  # one attempt per run
        try:
            factory = self.embedder.parallel_factory()
            if factory is None:
                return
            import multiprocessing

            self._pool = ProcessPoolExecutor(
                max_workers=self.count,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_setup,
                initargs=(factory,),
            )
            self._ready = [self._pool.submit(_ready) for _ in range(self.count)]
        except Exception as exc:  # noqa: BLE001 - no processes (limits, a bad factory): embed here
            self._give_up(exc)

    def _scatter(self, texts: list[str]) -> FloatArray:
        import numpy as np

        pool = self._pool
        assert pool is not None
        size = max(
            1, min(int(self.embedder.batch_size), math.ceil(len(texts) / (self.count * PIECES_PER_WORKER)))
        )
        futures = [pool.submit(_embed, texts[i : i + size]) for i in range(0, len(texts), size)]
        try:
            parts = [f.result() for f in futures]
        finally:
            for f in futures:
                f.cancel()
        out = np.concatenate(parts) if parts else np.zeros((0, self.embedder.dimension), np.float32)
        if out.shape != (len(texts), self.embedder.dimension):
            raise ModelError(
                f'embedding model "{self.embedder.id}" returned {out.shape} from its worker processes, '
                f"expected ({len(texts)}, {self.embedder.dimension})"
            )
        self.pieces += len(futures)
        return out

    def _give_up(self, exc: BaseException) -> None:
        reason = str(exc) or type(exc).__name__
        self.warn(
            f"warning: embedding worker processes stopped ({reason}); embedding the rest of this run in "
            "the indexing process. Set [index].embed_workers = 1 to always embed there."
        )
        self.close()

    def close(self) -> None:
        """Stop the workers (queued pieces are dropped; a piece being embedded is waited for)."""
        pool, self._pool, self._ready = self._pool, None, []
        if pool is not None:
            with contextlib.suppress(Exception):
                pool.shutdown(wait=True, cancel_futures=True)
