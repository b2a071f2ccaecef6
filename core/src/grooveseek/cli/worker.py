"""``groove index --worker``: embed the vector jobs an index run queued in a shared database.

A worker needs the database (``[index].database_url``), the knowledge base's name (the same
``--kb-path``: the folder's resolved path names it) and the same model; it never reads the notes,
since a job carries each chunk's embedding input. It runs until stopped (Ctrl-C or SIGTERM give its
job back at once and exit 0), waiting for work once a second; ``--once`` returns when the knowledge
base has no job left. Refused on the SQLite file, which only the indexing process writes.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType

import click

from ..app import App
from ..index.jobs import POLL_S, JobRunner, JobSettings, serve_jobs
from ..index.report import Reporter, RunLines
from ..index.runstate import FileGuard, RunState
from ..names import shown
from ..store.backend import bound
from ..store.jobs import VectorJob, job_queue

__all__ = ["SHARED_INDEX_NEEDED", "run_worker"]

SHARED_INDEX_NEEDED = (
    "needs an index in a PostgreSQL database that the coordinating groove index and every worker "
    "reach; set [index].database_url (or GROOVE_DATABASE_URL) in the config, see docs/postgres.md"
)


def _stop(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def run_worker(app: App, *, once: bool, lease_s: float, quiet: bool) -> None:
    """The worker's whole life (see the module docstring)."""
    binding = bound(app.db)
    if binding is None:
        raise click.UsageError(f"--worker {SHARED_INDEX_NEEDED}")
    backend, target = binding
    reporter = Reporter(quiet=quiet, progress=False, stages=not quiet)
    settings = JobSettings(lease_s=lease_s)
    if not backend.exists(target):  # started before the first run: wait for it, create nothing
        reporter.stage(f"Waiting for the first groove index of {target.kb} on {target.shown} (Ctrl-C stops)")
        try:
            while not backend.exists(target):
                threading.Event().wait(POLL_S)  # a polling interval, not a synchronisation
        except KeyboardInterrupt:
            reporter.stage("Worker stopped before any index run")
            return
    store = backend.open(target, create=False)
    queue = job_queue(store)
    if queue is None:
        store.close()
        raise click.UsageError(f"--worker {SHARED_INDEX_NEEDED} (this backend has no job queue)")
    previous = signal.signal(signal.SIGTERM, _stop)
    try:
        app.embedder.load()  # a missing model fails now, not at the first job
        state = RunState(RunLines(reporter))
        runner = JobRunner(
            queue,
            store,
            app.embedder,
            state,
            FileGuard(store, state),
            settings,
            started=lambda job: reporter.stage(f"  embedding: {shown(job.path)} ({len(job.chunks)} chunks)"),
            done=lambda job, n: reporter.stage(f"  embedded: {shown(job.path)} ({n} vectors)"),
            lost=lambda job: _lost(reporter, job),
        )
        reporter.stage(
            f"Worker {settings.worker} ready: vector jobs of {target.kb} on {target.shown}"
            + (" until none is left" if once else "; Ctrl-C stops it")
        )
        try:
            serve_jobs(queue, runner, once=once)
        except KeyboardInterrupt:
            reporter.stage(
                f"Worker stopped: {runner.finished} job(s) done; a job it held is back in the queue"
            )
            return
        reporter.stage(f"Worker done: {runner.finished} job(s) done, no job left")
    finally:
        signal.signal(signal.SIGTERM, previous)
        store.close()


def _lost(reporter: Reporter, job: VectorJob) -> None:
    reporter.warn(
        f"warning: {shown(job.path)}: this worker lost its claim (the lease ran out and another process "
        "took the job, or the document changed meanwhile); nothing written here. Raise --lease-seconds "
        "if one batch of the model takes longer than the lease"
    )
