"""Embedding in worker processes during an index run (issue 16: indexing on every core).

One ONNX session gains little from a second intra-op thread on a batch of one short text, and
nothing when another process holds the other core; a spawned process per core with a
single-threaded copy of the model does. ``EmbedWorkers`` owns those processes for one run: it
starts them once the run has asked for ``MIN_TEXTS`` texts (so a small run never pays for them),
keeps embedding in the indexing process until one has loaded its model, then splits each batch
into pieces the workers embed in any order and puts the vectors back in input order. Parsing and
writing stay in the indexing process (``Writer`` writes one batch while the workers embed the
next), so the index is written exactly as before; only where the vectors are computed changes,
and a worker's vectors equal the indexing process's.

Only embedders whose ``parallel_factory()`` returns a factory are embedded this way, and only when
``[index].embed_workers`` asks for more than one (issue 26: unset means the indexing process, whose
session uses the cores through its own threads, at a third of the memory); the others embed in the
indexing process. A worker
that dies (killed, out of memory) or cannot load its model never stops or hangs the run: the pool
is shut down, one warning says why, and the rest of the run embeds in the indexing process.
Queries never come here: they are embedded by the one session of the serving process.
"""

from __future__ import annotations

import math
import os
import pickle
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any

from ..errors import ModelError
from ..interfaces import Embedder, FloatArray

#: ``[index].embed_workers`` unset: embed in the indexing process (issue 26). Each worker holds its
#: own copy of the model (about 260 MiB resident for minilm-l6-int8, 350 MiB for the composite
#: default), so any worker at least doubles the peak memory of the run's process tree, while the
#: in-process session already spreads a call over the cores (ONNX Runtime's intra-op threads): two
#: workers gave 1.17x (loaded) to 1.28x (quiet) for 2.9x the peak memory, which breaks issue 26's
#: bound (peak RSS of the tree <= 1.5x the in-process path's). Workers are a deliberate
#: ``embed_workers`` (docs/performance.md, "Indexing on every core").
DEFAULT_WORKERS = 1
#: A run starts its workers once it has asked for this many texts; smaller runs never do, since
#: starting a worker (an interpreter, numpy, the runtime, the model) costs a core about a second.
MIN_TEXTS = 128
#: Pieces per worker per batch: small enough that no core idles long at a batch's end.
PIECES_PER_WORKER = 8
#: How long closing waits for a worker to finish its piece before it is terminated.
JOIN_SECONDS = 30.0


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the platform tells it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # macOS, Windows: no affinity mask
        return max(1, os.cpu_count() or 1)


def worker_count(configured: int | None) -> int:
    """``[index].embed_workers`` as given, else ``DEFAULT_WORKERS`` (the indexing process)."""
    return configured if configured is not None else DEFAULT_WORKERS


HOLD_SIGNALS = hasattr(signal, "pthread_sigmask")  # not on Windows


class WorkerSetupFailed(Exception):
    """A worker's embedder could not be built or loaded; carries the reason."""


class WorkerDied(Exception):
    """A worker process ended while the run needed it (killed, out of memory, crashed)."""


# -- the worker process ----------------------------------------------------------------------------
def _work(factory: Callable[[], Embedder], jobs: Any, results: Any) -> None:
    """A worker's life: build and load the embedder, say so, then embed pieces until told to stop.

    ``jobs`` is the queue every worker takes pieces from, so a free core takes the next one;
    ``results`` this worker's own pipe back: (batch, piece, vectors, error). When the pipe or the
    queue breaks (the indexing process stopped the pool or died), the worker ends with exit code 1
    and no word: multiprocessing would print the child's traceback raw beside the run's output
    (issue 21), and the indexing process already says what happened.
    """
    try:
        _serve_pieces(factory, jobs, results)
    except BaseException:  # noqa: BLE001 - see above; an int exit code prints nothing
        raise SystemExit(1) from None


def _serve_pieces(factory: Callable[[], Embedder], jobs: Any, results: Any) -> None:
    embedder, error = _setup(factory)
    results.send(("ready", error))
    while embedder is not None:
        job = jobs.get()
        if job is None:
            return
        batch, piece, texts = job
        try:
            results.send((batch, piece, embedder.embed_documents(texts), None))
        except BaseException as exc:  # noqa: BLE001 - the indexing process judges it, as in process
            results.send((batch, piece, None, _portable(exc)))


def _setup(factory: Callable[[], Embedder]) -> tuple[Embedder | None, str | None]:
    # Ctrl-C reaches the whole process group; the indexing process handles it and stops the workers.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _exit_with_parent()
    # A worker of `groove serve` (rebuild_index over stdio) must never write to the MCP stream, and
    # the model's "Loading ..." line was already printed once by the indexing process.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)
    saved, sys.stderr = sys.stderr, open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115
    try:
        embedder = factory()
        embedder.load()
        return embedder, None
    except BaseException as exc:  # noqa: BLE001 - reported to the indexing process, which falls back
        return None, f"{type(exc).__name__}: {exc}"
    finally:
        sys.stderr.close()
        sys.stderr = saved


def _exit_with_parent() -> None:
    """End this worker when the indexing process dies without stopping it (SIGKILL, OOM)."""
    import multiprocessing
    from multiprocessing.connection import wait

    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch() -> None:
        wait([parent.sentinel])
        os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _portable(exc: BaseException) -> BaseException:
    """``exc`` if it survives pickling, else a RuntimeError with its text."""
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:  # noqa: BLE001 - any exception type can fail to pickle in its own way
        return RuntimeError(f"{type(exc).__name__}: {exc}")


# -- the indexing process --------------------------------------------------------------------------
class _Pool:
    """``count`` spawned workers, a shared queue of pieces, and one result pipe per worker.

    Workers take pieces straight from the queue, so no thread of the indexing process has to run
    between two pieces (on a loaded machine that hand-off, as in ``ProcessPoolExecutor``, left the
    workers waiting). A worker's death shows as its process sentinel: ``WorkerDied``, never a hang.
    """

    def __init__(self, factory: Callable[[], Embedder], count: int) -> None:
        import multiprocessing

        ctx = multiprocessing.get_context("spawn")
        self.jobs = ctx.Queue()
        self.procs: list[Any] = []
        self.readers: list[Any] = []
        self.ready: set[int] = set()  # indexes of workers that loaded their model
        self.batch = 0
        self.sizes: dict[int, int] = {}  # pieces of each batch not yet collected
        self.answers: dict[int, dict[int, tuple[Any, BaseException | None]]] = {}
        # Ctrl-C is held while the workers start: one landing mid-launch left a child reading half
        # its start-up data (an EOFError traceback), and a child still starting would print a
        # KeyboardInterrupt of its own. The children keep it held; they ignore it anyway.
        held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT}) if HOLD_SIGNALS else None
        try:
            for i in range(count):
                reader, writer = ctx.Pipe(duplex=False)
                proc = ctx.Process(target=_work, args=(factory, self.jobs, writer), name=f"groove-embed-{i}")
                proc.daemon = True
                proc.start()
                writer.close()
                self.procs.append(proc)
                self.readers.append(reader)
        finally:
            if held is not None:
                signal.pthread_sigmask(signal.SIG_SETMASK, held)  # a held Ctrl-C is raised here

    def wait_ready(self, block: bool) -> bool:
        """True once a worker has loaded its model; waits for one when ``block``."""
        while not self.ready:
            if not self._receive(None if block else 0) and not block:
                return False
        return True

    def submit(self, texts: list[str], size: int) -> int:
        """Queue ``texts`` in pieces of ``size``; returns the batch number to collect."""
        self.batch += 1
        pieces = [texts[i : i + size] for i in range(0, len(texts), size)]
        self.sizes[self.batch], self.answers[self.batch] = len(pieces), {}
        for i, piece in enumerate(pieces):
            self.jobs.put((self.batch, i, piece))
        return self.batch

    def collect(self, batch: int) -> list[Any]:
        """Each piece's vectors, in order; raises the first piece's error once all are answered."""
        answers = self.answers[batch]
        while len(answers) < self.sizes[batch]:
            self._receive(None)
        del self.answers[batch], self.sizes[batch]
        ordered = [answers[i] for i in range(len(answers))]
        errors = [error for _, error in ordered if error is not None]
        if errors:
            raise errors[0]
        return [vectors for vectors, _ in ordered]

    def _receive(self, timeout: float | None) -> bool:
        """Read the messages ready within ``timeout`` into ``answers`` and ``ready``; False if none.

        Raises ``WorkerSetupFailed`` for a worker that could not load its model and ``WorkerDied``
        for one whose process ended (what it sent before is read first).
        """
        from multiprocessing.connection import wait

        sentinels = {p.sentinel: i for i, p in enumerate(self.procs)}
        ready = wait([*self.readers, *sentinels], timeout)
        dead = [sentinels[r] for r in ready if r in sentinels]
        for conn in (r for r in ready if r not in sentinels):
            i = self.readers.index(conn)
            try:
                message: Any = self.readers[i].recv()
            except EOFError:  # the worker is gone; its sentinel says how
                dead.append(i)
                continue
            if message[0] != "ready":
                batch, index, vectors, error = message
                if batch in self.answers:
                    self.answers[batch][index] = (vectors, error)
            elif message[1] is not None:
                raise WorkerSetupFailed(message[1])
            else:
                self.ready.add(i)
        if dead:
            raise WorkerDied(_ended(self.procs[dead[0]]))
        return bool(ready)

    def close(self, *, kill: bool) -> None:
        """Stop every worker: a loaded one after its piece, one still loading (or all, ``kill``) now."""
        for i, proc in enumerate(self.procs):
            if kill or i not in self.ready:
                proc.terminate()
            else:
                self.jobs.put(None)
        for proc in self.procs:
            proc.join(JOIN_SECONDS)
            if proc.is_alive():
                proc.kill()
                proc.join()
        self.jobs.cancel_join_thread()  # pieces nobody will take must not keep this process alive
        self.jobs.close()
        for reader in self.readers:
            reader.close()


def _ended(proc: Any) -> str:
    proc.join(JOIN_SECONDS)  # its pipe closed as it ended: the exit code is moments away
    code = proc.exitcode
    if code is not None and code < 0:
        return f"worker process {proc.pid} was killed by signal {-code} ({signal.Signals(-code).name})"
    return f"worker process {proc.pid} exited with code {code}"


class EmbedWorkers:
    """The worker processes of one index run: ``submit`` a batch's texts, ``collect`` their vectors.

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
        self._pool: _Pool | None = None
        self._off = count <= 1  # one worker is the indexing process itself

    def submit(self, texts: list[str]) -> int | None:
        """Hand ``texts`` to the workers; None when they are not (yet, or no longer) in use, and
        the caller embeds them in this process."""
        self.texts += len(texts)
        if self._pool is None and not self._off and self.texts >= MIN_TEXTS:
            self._start()
        if self._pool is None or not texts:
            return None
        try:
            if not self._pool.wait_ready(self.wait_ready):
                return None  # still loading: this batch is embedded here meanwhile
            # The worker's embedder batches a piece as it would any call: a piece is about balance.
            return self._pool.submit(texts, max(1, math.ceil(len(texts) / (self.count * PIECES_PER_WORKER))))
        except (WorkerDied, WorkerSetupFailed, OSError, EOFError) as exc:
            self._give_up(exc)
        return None

    def collect(self, ticket: int, count: int) -> FloatArray | None:
        """The vectors of a submitted batch of ``count`` texts; None when the workers stopped.

        A piece's own error (the worker's embedder raised) is raised here, as in process.
        """
        import numpy as np

        if self._pool is None:
            return None
        try:
            parts = self._pool.collect(ticket)
        except (WorkerDied, WorkerSetupFailed, OSError, EOFError) as exc:
            self._give_up(exc)
            return None
        out = np.concatenate(parts)
        if out.shape != (count, self.embedder.dimension):
            raise ModelError(
                f'embedding model "{self.embedder.id}" returned {out.shape} from its worker processes, '
                f"expected ({count}, {self.embedder.dimension})"
            )
        self.pieces += len(parts)
        return out

    def _start(self) -> None:
        self._off = True  # one attempt per run
        try:
            factory = self.embedder.parallel_factory()
            if factory is not None:
                self._pool = _Pool(factory, self.count)
        except Exception as exc:  # noqa: BLE001 - no processes (limits, a bad factory): embed here
            self._give_up(exc)

    def _give_up(self, exc: BaseException) -> None:
        reason = str(exc) or type(exc).__name__
        self.warn(
            f"warning: embedding worker processes stopped ({reason}); embedding the rest of this run in "
            "the indexing process. Set [index].embed_workers = 1 to always embed there."
        )
        self._close(kill=True)

    def close(self, *, now: bool = False) -> None:
        """Stop the workers: after the piece each is embedding (up to ``JOIN_SECONDS``), or ``now``
        when the run failed and nothing they hold will be written."""
        self._close(kill=now)

    def _close(self, *, kill: bool) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.close(kill=kill)
