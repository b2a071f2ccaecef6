"""Pass 2 through a store's job queue: the coordinator, its own share of the work, and workers.

On a store with a job queue (``store.jobs.VectorJobs``: the PostgreSQL plugin) the coordinating
``groove index`` writes every file lexically as always, then ``fill_by_jobs`` queues one job per
document with pending vectors, works jobs itself (unless ``--no-embed``) and waits, once a second,
until the queue of its index is empty: jobs other processes hold finish, or come back when their
lease expires and are taken again. ``groove index --worker`` runs ``serve_jobs``: claim, embed,
store, until stopped (or, with ``--once``, until the knowledge base has no job left).

``JobRunner`` works one claimed job: the document's pending chunks are embedded in batches of
``JOB_BATCH_CHUNKS`` (the same batches in every process, so the vectors do not depend on who
embedded them), the lease is extended between batches, and the vectors are stored only while the
claim is still held (``finish_vector_job``). A document that fails to embed is skipped as in
process (``Skipping <rel>: ...``) and its job dropped: its chunks stay pending for the next run.
A job held with the wrong model is given back and the process stops with a clear error.
"""

from __future__ import annotations

import os
import secrets
import socket
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import suppress

import attrs

from ..errors import ModelError
from ..interfaces import Embedder, FloatArray
from ..store.interface import IndexStore
from ..store.jobs import VectorJob, VectorJobs, job_queue
from .fill import VectorFill
from .report import Reporter
from .runstate import FileGuard, RunState

__all__ = [
    "DEFAULT_LEASE_S",
    "JOB_BATCH_CHUNKS",
    "POLL_S",
    "JobRunner",
    "JobSettings",
    "fill_by_jobs",
    "serve_jobs",
    "worker_name",
]

#: Chunks of one job embedded together; the lease is extended between two such batches.
JOB_BATCH_CHUNKS = 64
#: How long a claim lasts without an extension: a killed worker's job returns after this.
DEFAULT_LEASE_S = 60.0
#: How often a waiting coordinator or an idle worker looks at the queue again.
POLL_S = 1.0


def worker_name() -> str:
    """This process's name in ``claimed_by``: host, pid and a random tail (pids repeat)."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


@attrs.frozen
class JobSettings:
    """How a process takes part in pass 2 over a job queue."""

    embed: bool = True  # False: the coordinator only queues and waits (``--no-embed``)
    lease_s: float = DEFAULT_LEASE_S
    worker: str = attrs.field(factory=worker_name)


class JobRunner:
    """Claims and works jobs for one process (see the module docstring)."""

    def __init__(
        self,
        queue: VectorJobs,
        store: IndexStore,
        embedder: Embedder,
        state: RunState,
        guard: FileGuard,
        settings: JobSettings,
        *,
        started: Callable[[VectorJob], None] = lambda job: None,
        done: Callable[[VectorJob, int], None] = lambda job, n: None,
        lost: Callable[[VectorJob], None] = lambda job: None,
    ) -> None:
        self.queue = queue
        self.store = store
        self.embedder = embedder
        self.state = state
        self.guard = guard
        self.settings = settings
        self.started = started
        self.done = done
        self.lost = lost
        self.finished = 0  # jobs this process stored

    def work_free(self) -> int:
        """Claim and work jobs until none is free now; returns how many were claimed."""
        claimed = 0
        while (job := self.queue.claim_vector_job(self.settings.worker, self.settings.lease_s)) is not None:
            claimed += 1
            try:
                self._work(job)
            except BaseException:  # an interrupt, a failed run: the job goes back at once
                with suppress(Exception):
                    self.queue.release_vector_job(job)
                raise
        return claimed

    def _work(self, job: VectorJob) -> None:
        if job.identity is not None and job.identity != self.embedder.identity:
            raise ModelError(
                f"the index holds vectors of the model {job.identity}, and this process has "
                f"{self.embedder.identity}; run every worker with the coordinating groove index's "
                "model and config (model = ... or --model)"
            )
        self.started(job)
        collected: dict[int, FloatArray] = {}

        def collect(rows: Sequence[tuple[int, FloatArray]]) -> int:
            collected.update(rows)
            return len(rows)

        fill = VectorFill(
            self.store, self.embedder, self.state, self.guard, sink=collect, paths={job.document_id: job.path}
        )
        skipped = self.state.counts.skipped
        chunks = list(job.chunks)
        for start in range(0, len(chunks), JOB_BATCH_CHUNKS):
            if start and not self.queue.extend_vector_job(job, self.settings.lease_s):
                self.lost(job)  # another process holds it now: drop what was embedded here
                return
            fill.embed_chunks(chunks[start : start + JOB_BATCH_CHUNKS])
            if self.state.counts.skipped > skipped:
                break
        if self.state.counts.skipped > skipped:  # skipped as in process; pending for the next run
            self.queue.drop_vector_job(job)
            return
        written = self.queue.finish_vector_job(job, list(collected.items()))
        if written is None:
            self.lost(job)
            return
        self.finished += 1
        self.done(job, written)


def fill_by_jobs(
    store: IndexStore,
    embedder: Embedder,
    state: RunState,
    guard: FileGuard,
    reporter: Reporter,
    settings: JobSettings,
) -> bool:
    """Pass 2 of an index run through the store's job queue; False when the store has none (the
    caller then fills in process). Returns once no job of this index is left."""
    queue = job_queue(store)
    if queue is None:
        return False
    before = store.vectors_pending()
    jobs = queue.queue_vector_jobs()
    reporter.stage(
        f"Queued {jobs} document(s) with pending vectors for workers (groove index --worker)"
        + ("" if settings.embed else "; --no-embed: this process waits for them")
    )
    runner = JobRunner(queue, store, embedder, state, guard, settings, done=lambda job, n: progress())
    shown = 0
    looked = time.monotonic()

    def progress(*, now: bool = False) -> None:
        """The display follows every process's vectors: counted at most once a second (a count of
        the index's pending chunks is a scan)."""
        nonlocal shown, looked
        if not now and time.monotonic() - looked < POLL_S:
            return
        looked = time.monotonic()
        done = before - store.vectors_pending()
        if done > shown:
            reporter.filled(done - shown)
            shown = done

    waited = False
    while True:
        if settings.embed:
            runner.work_free()
        progress(now=True)
        left = queue.vector_jobs_left()
        if not left:
            return True
        if not waited:
            reporter.stage(f"Waiting for workers: {left} job(s) left (groove index --worker)")
            waited = True
        threading.Event().wait(POLL_S)  # a polling interval, not a synchronisation


def serve_jobs(queue: VectorJobs, runner: JobRunner, *, once: bool) -> None:
    """A worker's loop: work every free job of the knowledge base, then look again each second;
    with ``once``, return when the knowledge base has no job left (held ones included)."""
    while True:
        runner.work_free()
        if once and not queue.vector_jobs_left(any_generation=True):
            return
        threading.Event().wait(POLL_S)  # a polling interval, not a synchronisation
